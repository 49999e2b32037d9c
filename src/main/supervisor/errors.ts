// The engine's errors are src/shared/errors.ts's: each says its kind, which
// the HTTP host, the CLI, MCP and IPC map (never its message).
import { InputError, WardenError } from '../../shared/errors';

export { WardenError };
/** Bad input from a caller: the engine's name for InputError. */
export { InputError as WardenInputError };

/** A request refused for now for lack of a resource (descriptors): the host answers 503, and a later try may succeed. */
export class WardenUnavailableError extends WardenError {
  override name = 'WardenUnavailableError';
  constructor(message: string) {
    super('unavailable', message);
  }
}
