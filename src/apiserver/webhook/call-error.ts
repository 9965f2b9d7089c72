// Why a call to a webhook did not give an answer: the one error the webhook caller throws, with
// the text upstream's client would give (`Post "URL": dial tcp ...: connect: connection refused`),
// which the admission and conversion layers wrap in their own upstream wording.
export class WebhookCallError extends Error {
  constructor(
    message: string,
    /** The HTTP status the webhook answered with, when it answered with an error. */
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'WebhookCallError';
  }
}
