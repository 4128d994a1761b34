import { DomainError } from './domain-error';

/* Refusals of imports (docs/api.md, "Imports", "Error codes"). */

/** An import with this importid was made of another feed, or with other options; an importid is used once. */
export class ImportExists extends DomainError {
  override readonly name = 'ImportExists';
  readonly code = 'import_exists';
  constructor(readonly importid: string) {
    super(`Import ${importid} already exists with other rows or options`);
  }
}

export class ImportNotFound extends DomainError {
  override readonly name = 'ImportNotFound';
  readonly code = 'unknown_import';
  constructor(readonly importid: string) {
    super(`Import ${importid} not found`);
  }
}
