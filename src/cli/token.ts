// `skiff token create|list|delete`: bootstrap tokens agents join with.
import { Command } from 'commander';
import type { KubeList } from '../api/types.js';
import { isStatusError } from '../api/errors.js';
import { TOKEN_NAMESPACE, describeTokenSecret, generateToken, parseToken, tokenSecret, tokenSecretName } from '../auth/bootstrap-token.js';
import { addAdminFlags, adminClient } from './admin-client.js';
import { durationOption } from './options.js';

const SECRETS = `/api/v1/namespaces/${TOKEN_NAMESPACE}/secrets`;

export function tokenCommand(): Command {
  const cmd = new Command('token').description('manage bootstrap tokens that agents join with');
  cmd.addCommand(
    addAdminFlags(new Command('create'))
      .description('create a token and print it')
      .addOption(durationOption('--ttl <duration>', 'how long the token is valid (0: forever)', 86_400_000))
      .option('--description <text>', 'a note shown by `skiff token list`')
      .action(async (o: { ttl: number; description?: string; kubeconfig?: string; dataDir?: string }) => {
        const client = adminClient(o);
        try {
          const token = generateToken();
          const parsed = parseToken(token)!;
          await client.create(SECRETS, tokenSecret(parsed, { ttlMs: o.ttl, now: Date.now(), ...(o.description ? { description: o.description } : {}) }));
          console.log(token);
        } finally {
          client.close();
        }
      }),
  );
  cmd.addCommand(
    addAdminFlags(new Command('list'))
      .description('list tokens')
      .action(async (o: { kubeconfig?: string; dataDir?: string }) => {
        const client = adminClient(o);
        try {
          const list = await client.get<KubeList>(SECRETS, { query: { fieldSelector: 'type=bootstrap.kubernetes.io/token' } });
          const rows = list.items.map(describeTokenSecret).filter((t) => t !== undefined);
          console.log(['ID', 'TTL', 'EXPIRES', 'USAGES', 'DESCRIPTION'].join('\t'));
          for (const t of rows) {
            const left = t.expires ? Math.max(0, Date.parse(t.expires) - Date.now()) : undefined;
            const ttl = left === undefined ? '<forever>' : left === 0 ? '<expired>' : humanTtl(left);
            console.log([t.id, ttl, t.expires ?? '<never>', t.usages.join(','), t.description ?? ''].join('\t'));
          }
        } finally {
          client.close();
        }
      }),
  );
  cmd.addCommand(
    addAdminFlags(new Command('delete'))
      .description('revoke a token')
      .argument('<id>', 'token ID (the part before the dot) or the whole token')
      .action(async (id: string, o: { kubeconfig?: string; dataDir?: string }) => {
        const client = adminClient(o);
        const tokenId = id.split('.')[0]!;
        try {
          await client.delete(`${SECRETS}/${tokenSecretName(tokenId)}`);
          console.log(`bootstrap token "${tokenId}" deleted`);
        } catch (e) {
          if (isStatusError(e, 'NotFound')) {
            console.error(`error: bootstrap token "${tokenId}" not found`);
            process.exitCode = 1;
          } else throw e;
        } finally {
          client.close();
        }
      }),
  );
  return cmd;
}

/** Like kubeadm's TTL column: the largest whole unit ("23h", "59m", "30s"). */
function humanTtl(ms: number): string {
  if (ms >= 3_600_000) return `${Math.floor(ms / 3_600_000)}h`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)}m`;
  return `${Math.max(1, Math.floor(ms / 1000))}s`;
}
