// The cluster DNS server in a process of its own for the dns suite (bench/suites/dns.ts): the same
// ClusterDnsServer the agent runs, its index filled with the suite's Services, on 127.0.0.1.
// argv: <port> <services>
import { ClusterDnsIndex } from '../../src/dns/cluster-index.js';
import { ClusterDnsServer } from '../../src/dns/dns-server.js';
import { systemClock } from '../../src/util/clock.js';
import { createLogger } from '../../src/util/log.js';
import { benchServiceIp } from './dns-names.js';

const port = Number(process.argv[2]);
const count = Number(process.argv[3]);
const index = new ClusterDnsIndex();
index.setNamespace('default', true);
for (let i = 0; i < count; i++) {
  index.setService({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'default' }, spec: { clusterIP: benchServiceIp(i), ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } });
}
index.markSynced();
const server = new ClusterDnsServer({ index, settings: () => ({ zone: 'cluster.local', ttl: 5 }), upstreams: () => [], clock: systemClock, log: createLogger('bench-dns', 'json', 'warn') });
await server.listen({ host: '127.0.0.1', port });
console.log(`listening on ${port}`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
