// `skiff cloud serve`: a local infrastructure service. It keeps instance types, node groups and
// instances in <data-dir>/cloud.json (written atomically, so its state survives a SIGKILL), and
// runs each instance as a detached `skiff agent` process that survives the cloud's own restart.
// Faults are applied per instance through the API, so tests and scenarios can make the machines
// misbehave the way real ones do.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { INSTANCE_FAULTS, providerIdOf, type Instance, type InstanceFault, type InstanceType, type NodeGroup } from './api.js';
import { instanceDir, startMachine, stopMachine, type MachineHandle, type MachineOptions } from './machines.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';
import { rfc3339 } from '../util/time.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { CLUSTER_STOP_SIGNAL } from '../util/stop-signals.js';
import { DEFAULT_LOAD_BALANCER_RANGE, LoadBalancerForwarders, rangeAddresses, type LoadBalancer, type LoadBalancerSpec } from './load-balancers.js';

export const DEFAULT_INSTANCE_TYPES: InstanceType[] = [
  { name: 'small', cpu: '2', memory: '4Gi', pods: 110 },
  { name: 'medium', cpu: '4', memory: '16Gi', pods: 110 },
  { name: 'large', cpu: '8', memory: '32Gi', pods: 110 },
];

export const LOCAL_REGION = 'local';

/** How long a Terminated instance stays listed. */
const TERMINATED_KEPT_MS = 3_600_000;

interface StoredInstance extends Instance {
  machine?: MachineHandle;
  terminatedAt?: string;
}

interface CloudState {
  instanceTypes: InstanceType[];
  nodeGroups: NodeGroup[];
  instances: StoredInstance[];
  /** Per group, how many instances it has ever had: new ones are named <group>-<n+1>, never reused. */
  created?: Record<string, number>;
  loadBalancers?: LoadBalancer[];
}

export interface LocalCloudOptions {
  dataDir: string;
  machines: MachineOptions;
  clock: Clock;
  log: Logger;
  /** How long a deleted instance's agent may take to leave before it is killed. */
  terminationGraceMs?: number;
  /** Where load balancers get their addresses (a loopback range: nothing outside this machine is a target). */
  loadBalancerRange?: string;
}

class CloudError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class LocalCloud {
  private state: CloudState;
  private server?: Server;
  private readonly path: string;
  private readonly graceMs: number;
  private readonly forwarders: LoadBalancerForwarders;
  private readonly lbAddresses: string[];

  constructor(private readonly opts: LocalCloudOptions) {
    this.forwarders = new LoadBalancerForwarders(opts.log);
    this.lbAddresses = rangeAddresses(opts.loadBalancerRange ?? DEFAULT_LOAD_BALANCER_RANGE);
    this.path = join(opts.dataDir, 'cloud.json');
    this.graceMs = opts.terminationGraceMs ?? 30_000;
    this.state = existsSync(this.path) ? (JSON.parse(readFileSync(this.path, 'utf8')) as CloudState) : { instanceTypes: DEFAULT_INSTANCE_TYPES, nodeGroups: [], instances: [] };
    // An instance being deleted when the cloud stopped is finished now.
    for (const i of this.state.instances) if (i.state === 'ShuttingDown') void this.terminate(i);
  }

  private save(): void {
    const now = this.opts.clock.now();
    this.state.instances = this.state.instances.filter((i) => !(i.state === 'Terminated' && i.terminatedAt && now - Date.parse(i.terminatedAt) > TERMINATED_KEPT_MS));
    writeFileAtomic(this.path, `${JSON.stringify(this.state, null, 2)}\n`);
  }

  // ---- the model -----------------------------------------------------------------------------

  instanceTypes(): InstanceType[] {
    return this.state.instanceTypes;
  }

  setInstanceType(t: InstanceType): InstanceType {
    if (!/^[a-z0-9][a-z0-9.-]*$/.test(t.name)) throw new CloudError(400, `instance type name "${t.name}" must be lower-case letters, digits, dots and dashes`);
    if (typeof t.cpu !== 'string' || typeof t.memory !== 'string' || !Number.isInteger(t.pods) || t.pods < 1) throw new CloudError(400, 'an instance type needs cpu and memory (quantities, as strings) and pods (a positive integer)');
    const next = { name: t.name, cpu: t.cpu, memory: t.memory, pods: t.pods };
    this.state.instanceTypes = [...this.state.instanceTypes.filter((x) => x.name !== t.name), next];
    this.save();
    return next;
  }

  nodeGroups(): NodeGroup[] {
    return this.state.nodeGroups.map((g) => ({ ...g, targetSize: this.live(g.name).length }));
  }

  nodeGroup(name: string): NodeGroup {
    const g = this.nodeGroups().find((x) => x.name === name);
    if (!g) throw new CloudError(404, `node group "${name}" not found`);
    return g;
  }

  setNodeGroup(name: string, body: Partial<NodeGroup>): NodeGroup {
    if (!/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(name)) throw new CloudError(400, `node group name "${name}" must be a DNS label of at most 32 characters`);
    const old = this.state.nodeGroups.find((g) => g.name === name);
    const g: NodeGroup = {
      name,
      instanceType: body.instanceType ?? old?.instanceType ?? 'medium',
      zones: body.zones ?? old?.zones ?? [`${LOCAL_REGION}-a`],
      minSize: body.minSize ?? old?.minSize ?? 0,
      maxSize: body.maxSize ?? old?.maxSize ?? 10,
      targetSize: 0,
    };
    if (!this.state.instanceTypes.some((t) => t.name === g.instanceType)) throw new CloudError(400, `instance type "${g.instanceType}" does not exist`);
    if (!Array.isArray(g.zones) || g.zones.length === 0 || g.zones.some((z) => typeof z !== 'string' || !z)) throw new CloudError(400, 'zones must be a list of zone names');
    if (!Number.isInteger(g.minSize) || !Number.isInteger(g.maxSize) || g.minSize < 0 || g.maxSize < g.minSize) throw new CloudError(400, `sizes must satisfy 0 <= minSize (${g.minSize}) <= maxSize (${g.maxSize})`);
    this.state.nodeGroups = [...this.state.nodeGroups.filter((x) => x.name !== name), g];
    this.save();
    return this.nodeGroup(name);
  }

  /** Instances that count towards their group's size: all but the terminated. */
  private live(group: string): StoredInstance[] {
    return this.state.instances.filter((i) => i.group === group && i.state !== 'Terminated' && i.state !== 'ShuttingDown');
  }

  instances(group?: string): Instance[] {
    return this.state.instances.filter((i) => !group || i.group === group).map(publicView);
  }

  instance(id: string): Instance {
    return publicView(this.find(id));
  }

  private find(id: string): StoredInstance {
    const i = this.state.instances.find((x) => x.id === id);
    if (!i) throw new CloudError(404, `instance "${id}" not found`);
    return i;
  }

  /** Creates `count` instances in a group, within its maximum; `faults` are applied from the start. */
  createInstances(groupName: string, count: number, faults: InstanceFault[] = []): Instance[] {
    const group = this.nodeGroup(groupName);
    if (!Number.isInteger(count) || count < 1) throw new CloudError(400, 'count must be a positive integer');
    if (group.targetSize + count > group.maxSize) throw new CloudError(409, `node group "${groupName}" would exceed its maximum size ${group.maxSize} (has ${group.targetSize}, asked for ${count} more)`);
    for (const f of faults) if (f !== 'no-boot' && f !== 'classic') throw new CloudError(400, `fault "${f}" cannot be given at creation; apply it to a running instance`);
    const type = this.state.instanceTypes.find((t) => t.name === group.instanceType)!;
    const made: Instance[] = [];
    const created = (this.state.created ??= {});
    for (let n = 0; n < count; n++) {
      const id = `i-${randomBytes(4).toString('hex')}`;
      // Node names a person can read and say (workers-3), unique for the group's lifetime, so a
      // new machine never takes the name of one that went.
      created[groupName] = (created[groupName] ?? 0) + 1;
      const zone = group.zones[(group.targetSize + n) % group.zones.length]!;
      const inst: StoredInstance = {
        id,
        group: groupName,
        providerID: providerIdOf(groupName, id),
        nodeName: `${groupName}-${created[groupName]}`,
        instanceType: type.name,
        zone,
        region: LOCAL_REGION,
        state: 'Pending',
        createdAt: rfc3339(this.opts.clock.now()),
        faults: [...faults],
        address: '127.0.0.1',
      };
      this.state.instances.push(inst);
      this.boot(inst, type);
      made.push(publicView(inst));
    }
    this.save();
    return made;
  }

  private boot(inst: StoredInstance, type: InstanceType): void {
    // A machine that never boots is Running as far as the cloud knows: its agent just never starts.
    if (!inst.faults.includes('no-boot')) {
      try {
        inst.machine = startMachine(
          { dir: instanceDir(this.opts.dataDir, inst.id), nodeName: inst.nodeName, providerID: inst.providerID, cpu: type.cpu, memory: type.memory, pods: type.pods, classic: inst.faults.includes('classic') },
          this.opts.machines,
        );
      } catch (e) {
        this.opts.log.warn({ instance: inst.id, err: errorText(e) }, 'instance failed to boot');
      }
    }
    inst.state = 'Running';
    this.opts.log.info({ instance: inst.id, group: inst.group, node: inst.nodeName, zone: inst.zone, faults: inst.faults }, 'instance running');
  }

  /** Starts deleting an instance: its agent is asked to leave, then killed after the grace. */
  deleteInstance(id: string): Instance {
    const inst = this.find(id);
    if (inst.state === 'Terminated' || inst.state === 'ShuttingDown') return publicView(inst);
    inst.state = 'ShuttingDown';
    this.save();
    this.opts.log.info({ instance: id }, 'instance shutting down');
    void this.terminate(inst);
    return publicView(inst);
  }

  private async terminate(inst: StoredInstance): Promise<void> {
    try {
      if (inst.machine) await stopMachine(inst.machine, this.graceMs, this.opts.clock);
    } catch (e) {
      this.opts.log.warn({ instance: inst.id, err: errorText(e) }, 'could not stop instance');
    }
    inst.state = 'Terminated';
    inst.terminatedAt = rfc3339(this.opts.clock.now());
    delete inst.machine;
    rmSync(instanceDir(this.opts.dataDir, inst.id), { recursive: true, force: true });
    this.save();
    this.opts.log.info({ instance: inst.id }, 'instance terminated');
  }

  /**
   * Stops a running instance and keeps it, disk and all, as a cloud's stop-instance call does. Its
   * agent is told that the whole cluster stops (`signal`), so it keeps its Node and pods for the
   * next start rather than leaving.
   */
  async stopInstance(id: string, signal: NodeJS.Signals): Promise<Instance> {
    const inst = this.find(id);
    if (inst.state === 'Stopped') return publicView(inst);
    if (inst.state !== 'Running' && inst.state !== 'Pending') throw new CloudError(409, `instance "${id}" is ${inst.state}; only running instances stop`);
    if (inst.machine) await stopMachine(inst.machine, this.graceMs, this.opts.clock, signal);
    delete inst.machine;
    inst.state = 'Stopped';
    this.save();
    this.opts.log.info({ instance: id }, 'instance stopped');
    return publicView(inst);
  }

  /** Starts a stopped instance again on its kept disk: its agent comes back as the same Node. */
  startInstance(id: string): Instance {
    const inst = this.find(id);
    if (inst.state === 'Running' || inst.state === 'Pending') return publicView(inst);
    if (inst.state !== 'Stopped') throw new CloudError(409, `instance "${id}" is ${inst.state}; only stopped instances start`);
    this.boot(inst, this.state.instanceTypes.find((t) => t.name === inst.instanceType)!);
    this.save();
    return publicView(inst);
  }

  async applyFault(id: string, fault: InstanceFault): Promise<Instance> {
    if (!INSTANCE_FAULTS.includes(fault)) throw new CloudError(400, `unknown fault "${String(fault)}"; faults: ${INSTANCE_FAULTS.join(', ')}`);
    const inst = this.find(id);
    if (inst.state !== 'Running') throw new CloudError(409, `instance "${id}" is ${inst.state}; faults apply to running instances`);
    switch (fault) {
      case 'lost':
      case 'shutdown':
        // Power off: no graceful leave, the Node stays behind as a real machine's would.
        if (inst.machine) await stopMachine(inst.machine, 0, this.opts.clock);
        delete inst.machine;
        break;
      case 'classic':
      case 'no-boot': {
        // The machine restarts with the new behaviour.
        if (inst.machine) await stopMachine(inst.machine, 0, this.opts.clock);
        delete inst.machine;
        inst.faults.push(fault);
        this.boot(inst, this.state.instanceTypes.find((t) => t.name === inst.instanceType)!);
        this.save();
        return publicView(inst);
      }
    }
    inst.faults.push(fault);
    if (fault === 'lost') {
      this.state.instances = this.state.instances.filter((x) => x.id !== id);
      rmSync(join(this.opts.dataDir, 'instances', id), { recursive: true, force: true });
    } else inst.state = 'Stopped';
    this.save();
    this.opts.log.info({ instance: id, fault }, 'fault applied');
    return publicView(inst);
  }

  // ---- load balancers ------------------------------------------------------------------------

  loadBalancer(name: string): LoadBalancer {
    const lb = (this.state.loadBalancers ?? []).find((x) => x.name === name);
    if (!lb) throw new CloudError(404, `load balancer "${name}" not found`);
    return lb;
  }

  /** Creates or updates a load balancer: its address stays its own for as long as it exists. */
  async setLoadBalancer(name: string, body: Partial<LoadBalancerSpec>): Promise<LoadBalancer> {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name)) throw new CloudError(400, `load balancer name "${name}" must be lower-case letters, digits and dashes`);
    const ports = Array.isArray(body.ports) ? body.ports : [];
    const nodes = Array.isArray(body.nodes) ? body.nodes : [];
    if (ports.some((p) => !Number.isInteger(p?.port) || !Number.isInteger(p?.nodePort) || typeof p?.protocol !== 'string')) throw new CloudError(400, 'ports must be a list of {port, protocol, nodePort}');
    if (nodes.some((n) => typeof n !== 'string')) throw new CloudError(400, 'nodes must be a list of addresses');
    const all = (this.state.loadBalancers ??= []);
    const old = all.find((x) => x.name === name);
    const taken = new Set(all.map((x) => x.ip));
    const ip = old?.ip ?? this.lbAddresses.find((a) => !taken.has(a));
    if (!ip) throw new CloudError(409, 'no load balancer address is free');
    const lb: LoadBalancer = { name, ip, ports: ports.map((p) => ({ port: p.port, protocol: p.protocol, nodePort: p.nodePort })), nodes: [...nodes] };
    this.state.loadBalancers = [...all.filter((x) => x.name !== name), lb];
    this.save();
    try {
      await this.forwarders.apply(lb);
    } catch (e) {
      throw new CloudError(500, `load balancer ${name} cannot listen on ${ip}: ${errorText(e)}`);
    }
    if (!old) this.opts.log.info({ loadBalancer: name, ip }, 'load balancer created');
    return lb;
  }

  async deleteLoadBalancer(name: string): Promise<void> {
    const all = this.state.loadBalancers ?? [];
    if (!all.some((x) => x.name === name)) throw new CloudError(404, `load balancer "${name}" not found`);
    this.state.loadBalancers = all.filter((x) => x.name !== name);
    this.save();
    await this.forwarders.remove(name);
    this.opts.log.info({ loadBalancer: name }, 'load balancer deleted');
  }

  // ---- HTTP ----------------------------------------------------------------------------------

  async listen(host: string, port: number): Promise<number> {
    // The load balancers a previous run of the cloud made answer again.
    for (const lb of this.state.loadBalancers ?? []) await this.forwarders.apply(lb).catch((e: unknown) => this.opts.log.warn({ loadBalancer: lb.name, err: errorText(e) }, 'load balancer cannot listen'));
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : port;
  }

  async close(): Promise<void> {
    await this.forwarders.close();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      const method = req.method ?? 'GET';
      const body = method === 'POST' || method === 'PUT' ? await readJson(req) : undefined;
      const send = (code: number, v: unknown): void => {
        const text = `${JSON.stringify(v)}\n`;
        res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      };
      if (parts[0] === 'healthz') return send(200, { ok: true });
      if (parts[0] !== 'v1') throw new CloudError(404, `no such path ${url.pathname}`);
      const [, collection, name, sub] = parts;
      if (collection === 'load-balancers' && name && method === 'GET') return send(200, this.loadBalancer(name));
      if (collection === 'load-balancers' && name && method === 'PUT') return send(200, await this.setLoadBalancer(name, (body ?? {}) as Partial<LoadBalancerSpec>));
      if (collection === 'load-balancers' && name && method === 'DELETE') {
        await this.deleteLoadBalancer(name);
        return send(200, { name });
      }
      if (collection === 'instance-types' && !name && method === 'GET') return send(200, this.instanceTypes());
      if (collection === 'instance-types' && name && method === 'PUT') return send(200, this.setInstanceType({ ...(body as InstanceType), name }));
      if (collection === 'node-groups' && !name && method === 'GET') return send(200, this.nodeGroups());
      if (collection === 'node-groups' && name && !sub && method === 'GET') return send(200, this.nodeGroup(name));
      if (collection === 'node-groups' && name && !sub && method === 'PUT') return send(200, this.setNodeGroup(name, body as Partial<NodeGroup>));
      if (collection === 'node-groups' && name && sub === 'instances' && method === 'POST') {
        const b = (body ?? {}) as { count?: number; faults?: InstanceFault[] };
        return send(201, this.createInstances(name, b.count ?? 1, b.faults ?? []));
      }
      if (collection === 'instances' && !name && method === 'GET') return send(200, this.instances(url.searchParams.get('group') ?? undefined));
      if (collection === 'instances' && name && !sub && method === 'GET') return send(200, this.instance(name));
      if (collection === 'instances' && name && !sub && method === 'DELETE') return send(202, this.deleteInstance(name));
      if (collection === 'instances' && name && sub === 'stop' && method === 'POST') return send(200, await this.stopInstance(name, stopSignal((body as { signal?: unknown } | undefined)?.signal)));
      if (collection === 'instances' && name && sub === 'start' && method === 'POST') return send(200, this.startInstance(name));
      if (collection === 'instances' && name && sub === 'faults' && method === 'POST') return send(200, await this.applyFault(name, (body as { fault?: InstanceFault } | undefined)?.fault as InstanceFault));
      throw new CloudError(405, `${method} ${url.pathname} is not served`);
    } catch (e) {
      const code = e instanceof CloudError ? e.code : 500;
      if (code === 500) this.opts.log.error({ err: errorText(e) }, 'cloud request failed');
      const text = `${JSON.stringify({ error: errorText(e) })}\n`;
      res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    }
  }
}

/** The signal a stop sends the instance's agent: SIGTERM (it leaves) unless told the cluster stops. */
function stopSignal(v: unknown): NodeJS.Signals {
  if (v === undefined || v === 'SIGTERM') return 'SIGTERM';
  if (v === CLUSTER_STOP_SIGNAL) return CLUSTER_STOP_SIGNAL;
  throw new CloudError(400, `signal must be SIGTERM (the machine's node leaves) or ${CLUSTER_STOP_SIGNAL} (its whole cluster stops)`);
}

function publicView(i: StoredInstance): Instance {
  const { machine: _m, terminatedAt: _t, ...rest } = i;
  return rest;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 1024 * 1024) throw new CloudError(413, 'request body larger than 1 MiB');
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CloudError(400, `request body is not JSON: ${errorText(e)}`);
  }
}
