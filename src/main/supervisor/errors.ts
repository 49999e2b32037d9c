// Bad input from a caller: a one-line message for the user, never a stack trace.
export class WardenInputError extends Error {
  override name = 'WardenInputError';
}

/** A request refused for now for lack of a resource (descriptors): the host answers 503, and a later try may succeed. */
export class WardenUnavailableError extends WardenInputError {
  override name = 'WardenUnavailableError';
}
