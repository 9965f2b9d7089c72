// The JSON field names upstream Kubernetes v1.32 accepts for every kind skiff serves (and for
// autoscaling/v1 Scale), as nested trees taken from the json tags of upstream's Go types, alpha and
// beta fields included. The server walks an incoming object against its tree to report unknown
// fields anywhere inside it (fieldValidation=Strict/Warn) or to drop them (Ignore).

/**
 * A node of a known-fields tree:
 *   'leaf'                  a scalar, or a value whose inside is not checked (quantities, IntOrString,
 *                           RawExtension, free-form JSON, Time)
 *   { fields: {...} }       an object with exactly these fields
 *   { map: node }           an object with arbitrary string keys, each value a node (labels: { map: 'leaf' })
 *   { list: node }          an array whose items are nodes
 */
export type FieldTree = 'leaf' | { readonly fields: Readonly<Record<string, FieldTree>> } | { readonly map: FieldTree } | { readonly list: FieldTree };

const L = 'leaf' as const;
const f = (fields: Record<string, FieldTree>): FieldTree => ({ fields });
const list = (item: FieldTree): FieldTree => ({ list: item });
const map = (value: FieldTree): FieldTree => ({ map: value });
/** An object whose listed fields are all scalars. */
const leaves = (...names: string[]): FieldTree => f(Object.fromEntries(names.map((n) => [n, L])));
/** A list of scalars (strings, numbers). */
const LL = list(L);
/** A string-keyed map of scalars (labels, annotations, ResourceList of quantities, ...). */
const LM = map(L);

// ---- meta/v1 ------------------------------------------------------------------------------------

const ownerReference = leaves('apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion');

const managedFieldsEntry = leaves('manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource');

const objectMeta = f({
  name: L,
  generateName: L,
  namespace: L,
  selfLink: L,
  uid: L,
  resourceVersion: L,
  generation: L,
  creationTimestamp: L,
  deletionTimestamp: L,
  deletionGracePeriodSeconds: L,
  labels: LM,
  annotations: LM,
  ownerReferences: list(ownerReference),
  finalizers: LL,
  managedFields: list(managedFieldsEntry),
});

const labelSelectorRequirement = f({ key: L, operator: L, values: LL });

const labelSelector = f({ matchLabels: LM, matchExpressions: list(labelSelectorRequirement) });

/** metav1.Condition. */
const metaConditions = list(leaves('type', 'status', 'observedGeneration', 'lastTransitionTime', 'reason', 'message'));

/** Top-level fields every object has (TypeMeta inline + ObjectMeta). */
const objectBase = { apiVersion: L, kind: L, metadata: objectMeta };

// ---- core/v1: references and selectors ----------------------------------------------------------

const objectReference = leaves('kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath');
const policyRule = f({ verbs: LL, apiGroups: LL, resources: LL, resourceNames: LL, nonResourceURLs: LL });
const rbacSubject = leaves('kind', 'apiGroup', 'name', 'namespace');
const localObjectReference = leaves('name');
const typedLocalObjectReference = leaves('apiGroup', 'kind', 'name');
const typedObjectReference = leaves('apiGroup', 'kind', 'name', 'namespace');

const objectFieldSelector = leaves('apiVersion', 'fieldPath');
const resourceFieldSelector = leaves('containerName', 'resource', 'divisor');
const keyToPath = leaves('key', 'path', 'mode');

const nodeSelectorRequirement = f({ key: L, operator: L, values: LL });
const nodeSelectorTerm = f({
  matchExpressions: list(nodeSelectorRequirement),
  matchFields: list(nodeSelectorRequirement),
});
const nodeSelector = f({ nodeSelectorTerms: list(nodeSelectorTerm) });

// ---- core/v1: containers ------------------------------------------------------------------------

const containerPort = leaves('name', 'hostPort', 'containerPort', 'protocol', 'hostIP');

const envVar = f({
  name: L,
  value: L,
  valueFrom: f({
    fieldRef: objectFieldSelector,
    resourceFieldRef: resourceFieldSelector,
    configMapKeyRef: leaves('name', 'key', 'optional'),
    secretKeyRef: leaves('name', 'key', 'optional'),
  }),
});

const envFromSource = f({
  prefix: L,
  configMapRef: leaves('name', 'optional'),
  secretRef: leaves('name', 'optional'),
});

const resourceRequirements = f({
  limits: LM,
  requests: LM,
  claims: list(leaves('name', 'request')),
});

const volumeMount = leaves('name', 'readOnly', 'recursiveReadOnly', 'mountPath', 'subPath', 'mountPropagation', 'subPathExpr');
const volumeDevice = leaves('name', 'devicePath');

const execAction = f({ command: LL });
const httpGetAction = f({
  path: L,
  port: L,
  host: L,
  scheme: L,
  httpHeaders: list(leaves('name', 'value')),
});
const tcpSocketAction = leaves('port', 'host');
const grpcAction = leaves('port', 'service');

const probe = f({
  // ProbeHandler (inline)
  exec: execAction,
  httpGet: httpGetAction,
  tcpSocket: tcpSocketAction,
  grpc: grpcAction,
  initialDelaySeconds: L,
  timeoutSeconds: L,
  periodSeconds: L,
  successThreshold: L,
  failureThreshold: L,
  terminationGracePeriodSeconds: L,
});

const lifecycleHandler = f({
  exec: execAction,
  httpGet: httpGetAction,
  tcpSocket: tcpSocketAction,
  sleep: leaves('seconds'),
});

const lifecycle = f({ postStart: lifecycleHandler, preStop: lifecycleHandler });

const seLinuxOptions = leaves('user', 'role', 'type', 'level');
const windowsSecurityContextOptions = leaves('gmsaCredentialSpecName', 'gmsaCredentialSpec', 'runAsUserName', 'hostProcess');
const seccompProfile = leaves('type', 'localhostProfile');
const appArmorProfile = leaves('type', 'localhostProfile');

const securityContext = f({
  capabilities: f({ add: LL, drop: LL }),
  privileged: L,
  seLinuxOptions,
  windowsOptions: windowsSecurityContextOptions,
  runAsUser: L,
  runAsGroup: L,
  runAsNonRoot: L,
  readOnlyRootFilesystem: L,
  allowPrivilegeEscalation: L,
  procMount: L,
  seccompProfile,
  appArmorProfile,
});

const containerFields: Record<string, FieldTree> = {
  name: L,
  image: L,
  command: LL,
  args: LL,
  workingDir: L,
  ports: list(containerPort),
  envFrom: list(envFromSource),
  env: list(envVar),
  resources: resourceRequirements,
  resizePolicy: list(leaves('resourceName', 'restartPolicy')),
  restartPolicy: L,
  volumeMounts: list(volumeMount),
  volumeDevices: list(volumeDevice),
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe,
  lifecycle,
  terminationMessagePath: L,
  terminationMessagePolicy: L,
  imagePullPolicy: L,
  securityContext,
  stdin: L,
  stdinOnce: L,
  tty: L,
};

const container = f(containerFields);

/** EphemeralContainerCommon (inline, the same fields as Container) plus targetContainerName. */
const ephemeralContainer = f({ ...containerFields, targetContainerName: L });

// ---- core/v1: volumes ---------------------------------------------------------------------------

const persistentVolumeClaimSpec = f({
  accessModes: LL,
  selector: labelSelector,
  resources: f({ limits: LM, requests: LM }),
  volumeName: L,
  storageClassName: L,
  volumeMode: L,
  dataSource: typedLocalObjectReference,
  dataSourceRef: typedObjectReference,
  volumeAttributesClassName: L,
});

const downwardAPIVolumeFile = f({
  path: L,
  fieldRef: objectFieldSelector,
  resourceFieldRef: resourceFieldSelector,
  mode: L,
});

const volumeProjection = f({
  secret: f({ name: L, items: list(keyToPath), optional: L }),
  downwardAPI: f({ items: list(downwardAPIVolumeFile) }),
  configMap: f({ name: L, items: list(keyToPath), optional: L }),
  serviceAccountToken: leaves('audience', 'expirationSeconds', 'path'),
  clusterTrustBundle: f({ name: L, signerName: L, labelSelector, optional: L, path: L }),
});

const volume = f({
  name: L,
  // VolumeSource (inline)
  hostPath: leaves('path', 'type'),
  emptyDir: leaves('medium', 'sizeLimit'),
  gcePersistentDisk: leaves('pdName', 'fsType', 'partition', 'readOnly'),
  awsElasticBlockStore: leaves('volumeID', 'fsType', 'partition', 'readOnly'),
  gitRepo: leaves('repository', 'revision', 'directory'),
  secret: f({ secretName: L, items: list(keyToPath), defaultMode: L, optional: L }),
  nfs: leaves('server', 'path', 'readOnly'),
  iscsi: f({
    targetPortal: L,
    iqn: L,
    lun: L,
    iscsiInterface: L,
    fsType: L,
    readOnly: L,
    portals: LL,
    chapAuthDiscovery: L,
    chapAuthSession: L,
    secretRef: localObjectReference,
    initiatorName: L,
  }),
  glusterfs: leaves('endpoints', 'path', 'readOnly'),
  persistentVolumeClaim: leaves('claimName', 'readOnly'),
  rbd: f({
    monitors: LL,
    image: L,
    fsType: L,
    pool: L,
    user: L,
    keyring: L,
    secretRef: localObjectReference,
    readOnly: L,
  }),
  flexVolume: f({ driver: L, fsType: L, secretRef: localObjectReference, readOnly: L, options: LM }),
  cinder: f({ volumeID: L, fsType: L, readOnly: L, secretRef: localObjectReference }),
  cephfs: f({ monitors: LL, path: L, user: L, secretFile: L, secretRef: localObjectReference, readOnly: L }),
  flocker: leaves('datasetName', 'datasetUUID'),
  downwardAPI: f({ items: list(downwardAPIVolumeFile), defaultMode: L }),
  fc: f({ targetWWNs: LL, lun: L, fsType: L, readOnly: L, wwids: LL }),
  azureFile: leaves('secretName', 'shareName', 'readOnly'),
  configMap: f({ name: L, items: list(keyToPath), defaultMode: L, optional: L }),
  vsphereVolume: leaves('volumePath', 'fsType', 'storagePolicyName', 'storagePolicyID'),
  quobyte: leaves('registry', 'volume', 'readOnly', 'user', 'group', 'tenant'),
  azureDisk: leaves('diskName', 'diskURI', 'cachingMode', 'fsType', 'readOnly', 'kind'),
  photonPersistentDisk: leaves('pdID', 'fsType'),
  projected: f({ sources: list(volumeProjection), defaultMode: L }),
  portworxVolume: leaves('volumeID', 'fsType', 'readOnly'),
  scaleIO: f({
    gateway: L,
    system: L,
    secretRef: localObjectReference,
    sslEnabled: L,
    protectionDomain: L,
    storagePool: L,
    storageMode: L,
    volumeName: L,
    fsType: L,
    readOnly: L,
  }),
  storageos: f({ volumeName: L, volumeNamespace: L, fsType: L, readOnly: L, secretRef: localObjectReference }),
  csi: f({ driver: L, readOnly: L, fsType: L, volumeAttributes: LM, nodePublishSecretRef: localObjectReference }),
  ephemeral: f({ volumeClaimTemplate: f({ metadata: objectMeta, spec: persistentVolumeClaimSpec }) }),
  image: leaves('reference', 'pullPolicy'),
});

// ---- core/v1: scheduling ------------------------------------------------------------------------

const podAffinityTerm = f({
  labelSelector,
  namespaces: LL,
  topologyKey: L,
  namespaceSelector: labelSelector,
  matchLabelKeys: LL,
  mismatchLabelKeys: LL,
});

const weightedPodAffinityTerm = f({ weight: L, podAffinityTerm });

const podAffinity = f({
  requiredDuringSchedulingIgnoredDuringExecution: list(podAffinityTerm),
  preferredDuringSchedulingIgnoredDuringExecution: list(weightedPodAffinityTerm),
});

const affinity = f({
  nodeAffinity: f({
    requiredDuringSchedulingIgnoredDuringExecution: nodeSelector,
    preferredDuringSchedulingIgnoredDuringExecution: list(f({ weight: L, preference: nodeSelectorTerm })),
  }),
  podAffinity,
  podAntiAffinity: podAffinity,
});

const toleration = leaves('key', 'operator', 'value', 'effect', 'tolerationSeconds');

const topologySpreadConstraint = f({
  maxSkew: L,
  topologyKey: L,
  whenUnsatisfiable: L,
  labelSelector,
  minDomains: L,
  nodeAffinityPolicy: L,
  nodeTaintsPolicy: L,
  matchLabelKeys: LL,
});

// ---- core/v1: pods ------------------------------------------------------------------------------

const podSecurityContext = f({
  seLinuxOptions,
  windowsOptions: windowsSecurityContextOptions,
  runAsUser: L,
  runAsGroup: L,
  runAsNonRoot: L,
  supplementalGroups: LL,
  supplementalGroupsPolicy: L,
  fsGroup: L,
  sysctls: list(leaves('name', 'value')),
  fsGroupChangePolicy: L,
  seccompProfile,
  appArmorProfile,
  seLinuxChangePolicy: L,
});

const podDNSConfig = f({
  nameservers: LL,
  searches: LL,
  options: list(leaves('name', 'value')),
});

const podSpec = f({
  volumes: list(volume),
  initContainers: list(container),
  containers: list(container),
  ephemeralContainers: list(ephemeralContainer),
  restartPolicy: L,
  terminationGracePeriodSeconds: L,
  activeDeadlineSeconds: L,
  dnsPolicy: L,
  nodeSelector: LM,
  serviceAccountName: L,
  serviceAccount: L,
  automountServiceAccountToken: L,
  nodeName: L,
  hostNetwork: L,
  hostPID: L,
  hostIPC: L,
  shareProcessNamespace: L,
  securityContext: podSecurityContext,
  imagePullSecrets: list(localObjectReference),
  hostname: L,
  subdomain: L,
  affinity,
  schedulerName: L,
  tolerations: list(toleration),
  hostAliases: list(f({ ip: L, hostnames: LL })),
  priorityClassName: L,
  priority: L,
  dnsConfig: podDNSConfig,
  readinessGates: list(leaves('conditionType')),
  runtimeClassName: L,
  enableServiceLinks: L,
  preemptionPolicy: L,
  overhead: LM,
  topologySpreadConstraints: list(topologySpreadConstraint),
  setHostnameAsFQDN: L,
  os: leaves('name'),
  hostUsers: L,
  schedulingGates: list(leaves('name')),
  resourceClaims: list(leaves('name', 'resourceClaimName', 'resourceClaimTemplateName')),
  resources: resourceRequirements,
});

const podTemplateSpec = f({ metadata: objectMeta, spec: podSpec });

const jobSpec = f({
  parallelism: L,
  completions: L,
  activeDeadlineSeconds: L,
  podFailurePolicy: L,
  successPolicy: L,
  backoffLimit: L,
  backoffLimitPerIndex: L,
  maxFailedIndexes: L,
  selector: labelSelector,
  manualSelector: L,
  template: podTemplateSpec,
  ttlSecondsAfterFinished: L,
  completionMode: L,
  suspend: L,
  podReplacementPolicy: L,
  managedBy: L,
});


const containerState = f({
  waiting: leaves('reason', 'message'),
  running: leaves('startedAt'),
  terminated: leaves('exitCode', 'signal', 'reason', 'message', 'startedAt', 'finishedAt', 'containerID'),
});

const containerStatus = f({
  name: L,
  state: containerState,
  lastState: containerState,
  ready: L,
  restartCount: L,
  image: L,
  imageID: L,
  containerID: L,
  started: L,
  allocatedResources: LM,
  resources: resourceRequirements,
  volumeMounts: list(leaves('name', 'mountPath', 'readOnly', 'recursiveReadOnly')),
  user: f({ linux: f({ uid: L, gid: L, supplementalGroups: LL }) }),
  allocatedResourcesStatus: list(f({ name: L, resources: list(leaves('resourceID', 'health')) })),
});

const podStatus = f({
  phase: L,
  conditions: list(leaves('type', 'status', 'lastProbeTime', 'lastTransitionTime', 'reason', 'message')),
  message: L,
  reason: L,
  nominatedNodeName: L,
  hostIP: L,
  hostIPs: list(leaves('ip')),
  podIP: L,
  podIPs: list(leaves('ip')),
  startTime: L,
  initContainerStatuses: list(containerStatus),
  containerStatuses: list(containerStatus),
  qosClass: L,
  ephemeralContainerStatuses: list(containerStatus),
  resize: L,
  resourceClaimStatuses: list(leaves('name', 'resourceClaimName')),
});

// ---- core/v1: nodes -----------------------------------------------------------------------------

const nodeConfigSource = f({
  configMap: leaves('namespace', 'name', 'uid', 'resourceVersion', 'kubeletConfigKey'),
});

const nodeSpec = f({
  podCIDR: L,
  podCIDRs: LL,
  providerID: L,
  unschedulable: L,
  taints: list(leaves('key', 'value', 'effect', 'timeAdded')),
  configSource: nodeConfigSource,
  externalID: L,
});

const nodeStatus = f({
  capacity: LM,
  allocatable: LM,
  phase: L,
  conditions: list(leaves('type', 'status', 'lastHeartbeatTime', 'lastTransitionTime', 'reason', 'message')),
  addresses: list(leaves('type', 'address')),
  daemonEndpoints: f({ kubeletEndpoint: leaves('Port') }),
  nodeInfo: leaves(
    'machineID',
    'systemUUID',
    'bootID',
    'kernelVersion',
    'osImage',
    'containerRuntimeVersion',
    'kubeletVersion',
    'kubeProxyVersion',
    'operatingSystem',
    'architecture',
  ),
  images: list(f({ names: LL, sizeBytes: L })),
  volumesInUse: LL,
  volumesAttached: list(leaves('name', 'devicePath')),
  config: f({ assigned: nodeConfigSource, active: nodeConfigSource, lastKnownGood: nodeConfigSource, error: L }),
  runtimeHandlers: list(f({ name: L, features: leaves('recursiveReadOnlyMounts', 'userNamespaces') })),
  features: leaves('supplementalGroupsPolicy'),
});

// ---- core/v1: services and endpoints ------------------------------------------------------------

const serviceSpec = f({
  ports: list(leaves('name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort')),
  selector: LM,
  clusterIP: L,
  clusterIPs: LL,
  type: L,
  externalIPs: LL,
  sessionAffinity: L,
  loadBalancerIP: L,
  loadBalancerSourceRanges: LL,
  externalName: L,
  externalTrafficPolicy: L,
  healthCheckNodePort: L,
  publishNotReadyAddresses: L,
  sessionAffinityConfig: f({ clientIP: leaves('timeoutSeconds') }),
  ipFamilies: LL,
  ipFamilyPolicy: L,
  allocateLoadBalancerNodePorts: L,
  loadBalancerClass: L,
  internalTrafficPolicy: L,
  trafficDistribution: L,
});

const serviceStatus = f({
  loadBalancer: f({
    ingress: list(f({ ip: L, hostname: L, ipMode: L, ports: list(leaves('port', 'protocol', 'error')) })),
  }),
  conditions: metaConditions,
});

const endpointAddress = f({ ip: L, hostname: L, nodeName: L, targetRef: objectReference });

const endpointSubset = f({
  addresses: list(endpointAddress),
  notReadyAddresses: list(endpointAddress),
  ports: list(leaves('name', 'port', 'protocol', 'appProtocol')),
});

// ---- apps/v1 ------------------------------------------------------------------------------------

/** ReplicaSetCondition, DaemonSetCondition and NamespaceCondition (DeploymentCondition adds lastUpdateTime). */
const transitionConditions = list(leaves('type', 'status', 'lastTransitionTime', 'reason', 'message'));

const deploymentSpec = f({
  replicas: L,
  selector: labelSelector,
  template: podTemplateSpec,
  strategy: f({ type: L, rollingUpdate: leaves('maxUnavailable', 'maxSurge') }),
  minReadySeconds: L,
  revisionHistoryLimit: L,
  paused: L,
  progressDeadlineSeconds: L,
});

const deploymentStatus = f({
  observedGeneration: L,
  replicas: L,
  updatedReplicas: L,
  readyReplicas: L,
  availableReplicas: L,
  unavailableReplicas: L,
  conditions: list(leaves('type', 'status', 'lastUpdateTime', 'lastTransitionTime', 'reason', 'message')),
  collisionCount: L,
});

const replicaSetSpec = f({
  replicas: L,
  minReadySeconds: L,
  selector: labelSelector,
  template: podTemplateSpec,
});

const replicaSetStatus = f({
  replicas: L,
  fullyLabeledReplicas: L,
  readyReplicas: L,
  availableReplicas: L,
  observedGeneration: L,
  conditions: transitionConditions,
});

const daemonSetSpec = f({
  selector: labelSelector,
  template: podTemplateSpec,
  updateStrategy: f({ type: L, rollingUpdate: leaves('maxUnavailable', 'maxSurge') }),
  minReadySeconds: L,
  revisionHistoryLimit: L,
});

const daemonSetStatus = f({
  currentNumberScheduled: L,
  numberMisscheduled: L,
  desiredNumberScheduled: L,
  numberReady: L,
  observedGeneration: L,
  updatedNumberScheduled: L,
  numberAvailable: L,
  numberUnavailable: L,
  collisionCount: L,
  conditions: transitionConditions,
});

const statefulSetSpec = f({
  replicas: L,
  selector: labelSelector,
  template: podTemplateSpec,
  // PersistentVolumeClaim templates: stored as given (skiff serves no PersistentVolumeClaims).
  volumeClaimTemplates: list(f({ ...objectBase, spec: persistentVolumeClaimSpec, status: L })),
  serviceName: L,
  podManagementPolicy: L,
  updateStrategy: f({ type: L, rollingUpdate: leaves('partition', 'maxUnavailable') }),
  revisionHistoryLimit: L,
  minReadySeconds: L,
  persistentVolumeClaimRetentionPolicy: leaves('whenDeleted', 'whenScaled'),
  ordinals: leaves('start'),
});

const statefulSetStatus = f({
  observedGeneration: L,
  replicas: L,
  readyReplicas: L,
  currentReplicas: L,
  updatedReplicas: L,
  currentRevision: L,
  updateRevision: L,
  collisionCount: L,
  conditions: transitionConditions,
  availableReplicas: L,
});

// ---- kinds --------------------------------------------------------------------------------------

/** Trees keyed by `${group}/${kind}` with group '' for the core group, e.g. '/Pod', 'apps/Deployment'. Each covers the whole object (apiVersion, kind, metadata, spec, status, ...). */
export const KNOWN_FIELDS: Readonly<Record<string, FieldTree>> = {
  '/Pod': f({ ...objectBase, spec: podSpec, status: podStatus }),
  '/Node': f({ ...objectBase, spec: nodeSpec, status: nodeStatus }),
  '/Namespace': f({
    ...objectBase,
    spec: f({ finalizers: LL }),
    status: f({ phase: L, conditions: transitionConditions }),
  }),
  '/Service': f({ ...objectBase, spec: serviceSpec, status: serviceStatus }),
  '/Endpoints': f({ ...objectBase, subsets: list(endpointSubset) }),
  '/Event': f({
    ...objectBase,
    involvedObject: objectReference,
    reason: L,
    message: L,
    source: leaves('component', 'host'),
    firstTimestamp: L,
    lastTimestamp: L,
    count: L,
    type: L,
    eventTime: L,
    series: leaves('count', 'lastObservedTime'),
    action: L,
    related: objectReference,
    reportingComponent: L,
    reportingInstance: L,
  }),
  '/ConfigMap': f({ ...objectBase, immutable: L, data: LM, binaryData: LM }),
  '/Secret': f({ ...objectBase, immutable: L, data: LM, stringData: LM, type: L }),
  'apps/Deployment': f({ ...objectBase, spec: deploymentSpec, status: deploymentStatus }),
  'apps/ReplicaSet': f({ ...objectBase, spec: replicaSetSpec, status: replicaSetStatus }),
  '/ReplicationController': f({ ...objectBase, spec: f({ replicas: L, minReadySeconds: L, selector: LM, template: podTemplateSpec }), status: replicaSetStatus }),
  'apps/DaemonSet': f({ ...objectBase, spec: daemonSetSpec, status: daemonSetStatus }),
  'apps/StatefulSet': f({ ...objectBase, spec: statefulSetSpec, status: statefulSetStatus }),
  'apps/ControllerRevision': f({ ...objectBase, data: L, revision: L }),
  '/ServiceAccount': f({ ...objectBase, secrets: list(objectReference), imagePullSecrets: list(leaves('name')), automountServiceAccountToken: L }),
  'rbac.authorization.k8s.io/Role': f({ ...objectBase, rules: list(policyRule) }),
  'rbac.authorization.k8s.io/ClusterRole': f({ ...objectBase, rules: list(policyRule), aggregationRule: f({ clusterRoleSelectors: list(labelSelector) }) }),
  'rbac.authorization.k8s.io/RoleBinding': f({ ...objectBase, subjects: list(rbacSubject), roleRef: leaves('apiGroup', 'kind', 'name') }),
  'rbac.authorization.k8s.io/ClusterRoleBinding': f({ ...objectBase, subjects: list(rbacSubject), roleRef: leaves('apiGroup', 'kind', 'name') }),
  'batch/CronJob': f({
    ...objectBase,
    spec: f({
      schedule: L,
      timeZone: L,
      startingDeadlineSeconds: L,
      concurrencyPolicy: L,
      suspend: L,
      jobTemplate: f({ metadata: objectMeta, spec: jobSpec }),
      successfulJobsHistoryLimit: L,
      failedJobsHistoryLimit: L,
    }),
    status: f({ active: list(objectReference), lastScheduleTime: L, lastSuccessfulTime: L }),
  }),
  'batch/Job': f({
    ...objectBase,
    spec: jobSpec,
    status: f({
      conditions: list(leaves('type', 'status', 'lastProbeTime', 'lastTransitionTime', 'reason', 'message')),
      startTime: L,
      completionTime: L,
      active: L,
      succeeded: L,
      failed: L,
      terminating: L,
      completedIndexes: L,
      failedIndexes: L,
      uncountedTerminatedPods: f({ succeeded: LL, failed: LL }),
      ready: L,
    }),
  }),
  'discovery.k8s.io/EndpointSlice': f({
    ...objectBase,
    addressType: L,
    endpoints: list(
      f({
        addresses: LL,
        conditions: leaves('ready', 'serving', 'terminating'),
        hostname: L,
        targetRef: objectReference,
        deprecatedTopology: LM,
        nodeName: L,
        zone: L,
        hints: f({ forZones: list(leaves('name')), forNodes: list(leaves('name')) }),
      }),
    ),
    ports: list(leaves('name', 'protocol', 'port', 'appProtocol')),
  }),
  'coordination.k8s.io/Lease': f({
    ...objectBase,
    spec: leaves(
      'holderIdentity',
      'leaseDurationSeconds',
      'acquireTime',
      'renewTime',
      'leaseTransitions',
      'strategy',
      'preferredHolder',
    ),
  }),
  'policy/PodDisruptionBudget': f({
    ...objectBase,
    spec: f({ minAvailable: L, selector: labelSelector, maxUnavailable: L, unhealthyPodEvictionPolicy: L }),
    status: f({
      observedGeneration: L,
      disruptedPods: LM,
      disruptionsAllowed: L,
      currentHealthy: L,
      desiredHealthy: L,
      expectedPods: L,
      conditions: metaConditions,
    }),
  }),
  'autoscaling/Scale': f({
    ...objectBase,
    spec: leaves('replicas'),
    status: leaves('replicas', 'selector'),
  }),
};
