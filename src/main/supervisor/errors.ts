// Bad input from a caller: a one-line message for the user, never a stack trace.
export class WardenInputError extends Error {
  override name = 'WardenInputError';
}
