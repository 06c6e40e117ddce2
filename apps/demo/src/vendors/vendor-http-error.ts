/** An error answer of a (simulated) vendor API, with its HTTP status. */
export class VendorHttpError extends Error {
  constructor(
    readonly vendor: string,
    readonly status: 404 | 429 | 503,
    message: string,
    /** Retry-After of a 429, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(`${vendor}: ${status} ${message}`);
    this.name = 'VendorHttpError';
  }
}
