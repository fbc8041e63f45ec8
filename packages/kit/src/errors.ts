/**
 * Domain errors. Domain code throws these and knows nothing of HTTP; `http/errors.ts` is the one place that maps them
 * to status codes and bodies. `ConfigError` is a setting or file an operator must fix: commands exit 2 with its message.
 */
export class DomainError extends Error {
  override name = 'DomainError';
}

/** A resource that does not exist, or belongs to another tenant (both answer alike). */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError';
}

/** A name taken or a state that does not allow the change. */
export class ConflictError extends DomainError {
  override name = 'ConflictError';
}

/** A rule the schema cannot express: immutable field changed, reserved secret name, wrong source for this mode. */
export class InputError extends DomainError {
  override name = 'InputError';
}

/** Missing or unknown credentials. */
export class UnauthorizedError extends DomainError {
  override name = 'UnauthorizedError';
}

/** Authenticated, but not allowed. */
export class ForbiddenError extends DomainError {
  override name = 'ForbiddenError';
}

/** One pydantic-style validation issue: `loc` starts with body, path or query. */
export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** Schema failure at the edge (422). */
export class ValidationError extends DomainError {
  override name = 'ValidationError';
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; '));
  }
}

/** A setting, file or command-line value that cannot work; the command stops with this one line (exit 2). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Request body over the limit (413). */
export class PayloadTooLargeError extends DomainError {
  override name = 'PayloadTooLargeError';
}

export const deploymentNotFound = (id: string) => new NotFoundError(`Deployment ID ${id} not found.`);
export const revisionNotFound = (id: string) => new NotFoundError(`Revision ID ${id} not found.`);
export const providerNotFound = (providerId: string) => new NotFoundError(`Provider ${providerId} not found.`);
