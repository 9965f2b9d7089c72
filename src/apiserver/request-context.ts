// Who is asking and how: passed from the HTTP layer into object storage.
import type { UserInfo } from '../auth/user.js';

export type { UserInfo };

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteContext {
  user: UserInfo;
  /** fieldManager query parameter, or derived from the user agent. */
  fieldManager: string;
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** Warnings to return in `Warning:` headers (e.g. unknown fields with fieldValidation=Warn). */
  warnings: string[];
  /** Server-side apply already recorded field ownership; the write must not add an Update entry. */
  managedFieldsSet?: boolean;
}

export function managerFromUserAgent(userAgent: string | undefined): string {
  if (!userAgent) return 'unknown';
  const first = userAgent.split('/')[0]!.trim();
  return first.length > 0 ? first.slice(0, 128) : 'unknown';
}
