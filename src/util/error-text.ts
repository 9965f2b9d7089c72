// The message of anything thrown, for a log line or a one-line error: an Error's message, else its string form.
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
