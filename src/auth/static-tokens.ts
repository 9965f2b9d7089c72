// Static bearer tokens from a CSV file, as kube-apiserver's --token-auth-file reads it: one
// `token,user,uid[,"group1,group2"]` record per line. Meant for scripts, CI and load generators that
// cannot present a client certificate; the tokens never expire and change only with a restart.
import { errorText } from '../util/error-text.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { TokenAuthenticator, UserInfo } from './user.js';

/**
 * Tokens are kept by their SHA-256, so looking one up takes the same time however much of a
 * guess matches a real token.
 */
function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}

export class StaticTokens implements TokenAuthenticator {
  private constructor(private readonly users: Map<string, UserInfo>) {}

  /**
   * Reads the file; throws with the file name and line for a record kube-apiserver refuses too.
   * Records it only warns about (an empty token, a repeated token: the last one wins) go to `warn`.
   */
  static fromFile(path: string, warn: (message: string) => void = () => {}): StaticTokens {
    return StaticTokens.parse(readFileSync(path, 'utf8'), path, warn);
  }

  static parse(text: string, source = 'token file', warn: (message: string) => void = () => {}): StaticTokens {
    let records: { record: string[]; info: { lines: number } }[];
    try {
      records = parse(text, { relax_column_count: true, skip_empty_lines: true, trim: true, info: true }) as unknown as typeof records;
    } catch (e) {
      throw new Error(`${source}: ${errorText(e)}`);
    }
    const users = new Map<string, UserInfo>();
    for (const { record: r, info } of records) {
      const at = `${source} line ${info.lines}`;
      if (r.length < 3) throw new Error(`${at}: ${r.length} columns; need at least 3 (token, user name, user uid)`);
      const [token, name, , groups] = r as [string, string, string, string?];
      if (!token) {
        warn(`${at}: empty token, skipped`);
        continue;
      }
      if (!name) throw new Error(`${at}: empty user name`);
      const key = digest(token);
      if (users.has(key)) warn(`${at}: repeats an earlier token, which now stands for ${name}`);
      users.set(key, { name, groups: (groups ?? '').split(',').map((g) => g.trim()).filter((g) => g.length > 0) });
    }
    return new StaticTokens(users);
  }

  get size(): number {
    return this.users.size;
  }

  async authenticate(token: string): Promise<UserInfo | undefined> {
    const user = this.users.get(digest(token));
    return user ? { name: user.name, groups: [...user.groups] } : undefined;
  }
}
