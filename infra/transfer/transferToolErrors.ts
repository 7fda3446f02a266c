/**
 * What a transfer tool throws when it could not learn anything from its service (named after
 * Rucio's exceptions). The poller keeps the jobs as they were and asks again at its next cycle;
 * submissions never throw these: a job the service did not take is reported FAILED by `poll`.
 */
export class TransferToolError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The service did not answer in time. */
export class TransferToolTimeout extends TransferToolError {}

/** The service answered something the tool cannot read (not JSON, not the documented shape). */
export class TransferToolWrongAnswer extends TransferToolError {}

/** The service could not be reached, or answered with an error status. */
export class TransferToolUnavailable extends TransferToolError {}
