// Real etcd for tests: see src/etcd/local-cluster.ts.
export * from '../../src/etcd/local-cluster.js';
export { LocalEtcdCluster as EtcdTestCluster } from '../../src/etcd/local-cluster.js';
