// The one description of every kind skiff serves: its protobuf messages, written for skiff from the
// upstream API definitions (k8s.io/api and k8s.io/apimachinery generated.proto, types.go). Field
// numbers and wire types are the contract and must match upstream exactly; field names are the
// JSON names. Protobuf decoding (kubectl >= 1.32 typed clients), Go's JSON type checks and field
// validation's known fields are read off them (./root.ts), so a field missing here is unknown to
// all three: dropped, or refused with fieldValidation=Strict.
//
// The .proto language cannot say how a field serialises to JSON, so three custom field options
// carry that knowledge (taken from the Go types; protobufjs keeps them in field.options):
//   (ptr)    the Go field is a pointer (*int32, *bool, *string, *Struct, *Quantity, *IntOrString):
//            gogo-protobuf writes it only when non-nil, so when it is on the wire its value is kept
//            even if zero or empty (spec.replicas: 0, automountServiceAccountToken: false, emptyDir: {}).
//   (keep)   the Go field is a plain scalar without `omitempty` whose zero value means something
//            (exitCode: 0, ready: false, status counters): kept when zero, as Go's JSON would.
//   (inline) the Go field is an embedded struct tagged json:",inline": its fields join the parent
//            object instead of nesting under the proto field name (Volume.volumeSource, Probe.handler).
//            On a repeated field (keep) says the Go list has no `omitempty`: JSON carries it as null.
// How objects merge is said with upstream's own marker names, from the Go types' struct tags and
// +markers; strategic merge patch, server-side apply and the OpenAPI documents read them:
//   (patchStrategy) = "merge", (patchMergeKey)      the strategic-merge tags;
//   (listType) = "atomic|set|map", (listMapKeys)    +listType/+listMapKey (keys comma-separated);
//   (mapType) = "atomic", option (structType)       +mapType/+structType: one value, owned whole;
//   (default)                                       +default on a list-map key (protocol: TCP).

export const RUNTIME_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.runtime;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown {
  optional TypeMeta typeMeta = 1;
  optional bytes raw = 2;
  optional string contentEncoding = 3;
  optional string contentType = 4;
}
message RawExtension { optional bytes raw = 1; }
`;

export const RESOURCE_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.api.resource;
message Quantity { optional string string = 1; }
`;

export const INTSTR_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.util.intstr;
message IntOrString { optional int64 type = 1; optional int32 intVal = 2; optional string strVal = 3; }
`;

export const META_V1_PROTO = `
syntax = "proto2";
package k8s.io.apimachinery.pkg.apis.meta.v1;
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message MicroTime { optional int64 seconds = 1; optional int32 nanos = 2; }
message Duration { optional int64 duration = 1; }
message FieldsV1 { optional bytes Raw = 1; }
message ObjectMeta {
  optional string name = 1;
  optional string generateName = 2;
  optional string namespace = 3;
  optional string selfLink = 4;
  optional string uid = 5;
  optional string resourceVersion = 6;
  optional int64 generation = 7;
  optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9 [(ptr) = true];
  optional int64 deletionGracePeriodSeconds = 10 [(ptr) = true];
  map<string, string> labels = 11;
  map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13 [(patchStrategy) = "merge", (patchMergeKey) = "uid", (listType) = "map", (listMapKeys) = "uid"];
  repeated string finalizers = 14 [(patchStrategy) = "merge", (listType) = "set"];
  repeated ManagedFieldsEntry managedFields = 17;
}
message OwnerReference { option (structType) = "atomic";
  optional string kind = 1;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional bool controller = 6 [(ptr) = true];
  optional bool blockOwnerDeletion = 7 [(ptr) = true];
}
message ManagedFieldsEntry {
  optional string manager = 1;
  optional string operation = 2;
  optional string apiVersion = 3;
  optional Time time = 4 [(ptr) = true];
  optional string fieldsType = 6;
  optional FieldsV1 fieldsV1 = 7 [(ptr) = true];
  optional string subresource = 8;
}
message LabelSelector { option (structType) = "atomic";
  map<string, string> matchLabels = 1;
  repeated LabelSelectorRequirement matchExpressions = 2;
}
message LabelSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message Condition {
  optional string type = 1;
  optional string status = 2;
  optional int64 observedGeneration = 3;
  optional Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message Preconditions {
  optional string uid = 1 [(ptr) = true];
  optional string resourceVersion = 2 [(ptr) = true];
}
message DeleteOptions {
  optional int64 gracePeriodSeconds = 1 [(ptr) = true];
  optional Preconditions preconditions = 2 [(ptr) = true];
  optional bool orphanDependents = 3 [(ptr) = true];
  optional string propagationPolicy = 4 [(ptr) = true];
  repeated string dryRun = 5;
  optional bool ignoreStoreReadErrorWithClusterBreakingPotential = 6 [(ptr) = true];
}
`;

export const CORE_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.core.v1;

// ---- top-level kinds ----
message Namespace {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional NamespaceSpec spec = 2;
  optional NamespaceStatus status = 3;
}
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; repeated NamespaceCondition conditions = 2 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"]; }
message NamespaceCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}

message ConfigMap {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  map<string, string> data = 2;
  map<string, bytes> binaryData = 3;
  optional bool immutable = 4 [(ptr) = true];
}

message Secret {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  map<string, bytes> data = 2;
  optional string type = 3;
  map<string, string> stringData = 4;
  optional bool immutable = 5 [(ptr) = true];
}

message ServiceAccount {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated ObjectReference secrets = 2;
  repeated LocalObjectReference imagePullSecrets = 3;
  optional bool automountServiceAccountToken = 4 [(ptr) = true];
}

message Binding {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ObjectReference target = 2;
}

message Event {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ObjectReference involvedObject = 2;
  optional string reason = 3;
  optional string message = 4;
  optional EventSource source = 5;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time firstTimestamp = 6;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTimestamp = 7;
  optional int32 count = 8;
  optional string type = 9;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime eventTime = 10;
  optional EventSeries series = 11 [(ptr) = true];
  optional string action = 12;
  optional ObjectReference related = 13 [(ptr) = true];
  optional string reportingComponent = 14;
  optional string reportingInstance = 15;
}
message EventSource { optional string component = 1; optional string host = 2; }
message EventSeries {
  optional int32 count = 1 [(keep) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime lastObservedTime = 2;
}

message Endpoints {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated EndpointSubset subsets = 2;
}
message EndpointSubset {
  repeated EndpointAddress addresses = 1;
  repeated EndpointAddress notReadyAddresses = 2;
  repeated EndpointPort ports = 3;
}
message EndpointAddress {
  optional string ip = 1;
  optional ObjectReference targetRef = 2 [(ptr) = true];
  optional string hostname = 3;
  optional string nodeName = 4 [(ptr) = true];
}
message EndpointPort {
  optional string name = 1;
  optional int32 port = 2;
  optional string protocol = 3;
  optional string appProtocol = 4 [(ptr) = true];
}

message Service {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ServiceSpec spec = 2;
  optional ServiceStatus status = 3;
}
message ServiceSpec {
  repeated ServicePort ports = 1 [(patchStrategy) = "merge", (patchMergeKey) = "port", (listType) = "map", (listMapKeys) = "port,protocol"];
  map<string, string> selector = 2 [(mapType) = "atomic"];
  optional string clusterIP = 3;
  optional string type = 4;
  repeated string externalIPs = 5;
  optional string sessionAffinity = 7;
  optional string loadBalancerIP = 8;
  repeated string loadBalancerSourceRanges = 9;
  optional string externalName = 10;
  optional string externalTrafficPolicy = 11;
  optional int32 healthCheckNodePort = 12;
  optional bool publishNotReadyAddresses = 13;
  optional SessionAffinityConfig sessionAffinityConfig = 14 [(ptr) = true];
  optional string ipFamilyPolicy = 17 [(ptr) = true];
  repeated string clusterIPs = 18;
  repeated string ipFamilies = 19;
  optional bool allocateLoadBalancerNodePorts = 20 [(ptr) = true];
  optional string loadBalancerClass = 21 [(ptr) = true];
  optional string internalTrafficPolicy = 22 [(ptr) = true];
  optional string trafficDistribution = 23 [(ptr) = true];
}
message ServicePort {
  optional string name = 1;
  optional string protocol = 2 [(default) = "TCP"];
  optional int32 port = 3;
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString targetPort = 4;
  optional int32 nodePort = 5;
  optional string appProtocol = 6 [(ptr) = true];
}
message SessionAffinityConfig { optional ClientIPConfig clientIP = 1 [(ptr) = true]; }
message ClientIPConfig { optional int32 timeoutSeconds = 1 [(ptr) = true]; }
message ServiceStatus {
  optional LoadBalancerStatus loadBalancer = 1;
  repeated .k8s.io.apimachinery.pkg.apis.meta.v1.Condition conditions = 2 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message LoadBalancerStatus { repeated LoadBalancerIngress ingress = 1; }
message LoadBalancerIngress {
  optional string ip = 1;
  optional string hostname = 2;
  optional string ipMode = 3 [(ptr) = true];
  repeated PortStatus ports = 4;
}
message PortStatus {
  optional int32 port = 1;
  optional string protocol = 2;
  optional string error = 3 [(ptr) = true];
}

message Node {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional NodeSpec spec = 2;
  optional NodeStatus status = 3;
}
message NodeSpec {
  optional string podCIDR = 1;
  optional string externalID = 2;
  optional string providerID = 3;
  optional bool unschedulable = 4;
  repeated Taint taints = 5;
  optional NodeConfigSource configSource = 6 [(ptr) = true];
  repeated string podCIDRs = 7 [(patchStrategy) = "merge", (listType) = "set"];
}
message Taint {
  optional string key = 1;
  optional string value = 2;
  optional string effect = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time timeAdded = 4 [(ptr) = true];
}
message NodeConfigSource { optional ConfigMapNodeConfigSource configMap = 2 [(ptr) = true]; }
message ConfigMapNodeConfigSource {
  optional string namespace = 1;
  optional string name = 2;
  optional string uid = 3;
  optional string resourceVersion = 4;
  optional string kubeletConfigKey = 5;
}
message NodeStatus {
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> capacity = 1;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> allocatable = 2;
  optional string phase = 3;
  repeated NodeCondition conditions = 4 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  repeated NodeAddress addresses = 5 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  optional NodeDaemonEndpoints daemonEndpoints = 6;
  optional NodeSystemInfo nodeInfo = 7;
  repeated ContainerImage images = 8;
  repeated string volumesInUse = 9;
  repeated AttachedVolume volumesAttached = 10;
  optional NodeConfigStatus config = 11 [(ptr) = true];
  repeated NodeRuntimeHandler runtimeHandlers = 12;
  optional NodeFeatures features = 13 [(ptr) = true];
  repeated string declaredFeatures = 14;
}
message NodeCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastHeartbeatTime = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message NodeAddress { optional string type = 1; optional string address = 2; }
message NodeDaemonEndpoints { optional DaemonEndpoint kubeletEndpoint = 1; }
message DaemonEndpoint { optional int32 Port = 1 [(keep) = true]; }
message NodeSystemInfo {
  optional string machineID = 1;
  optional string systemUUID = 2;
  optional string bootID = 3;
  optional string kernelVersion = 4;
  optional string osImage = 5;
  optional string containerRuntimeVersion = 6;
  optional string kubeletVersion = 7;
  optional string kubeProxyVersion = 8;
  optional string operatingSystem = 9;
  optional string architecture = 10;
  optional NodeSwapStatus swap = 11 [(ptr) = true];
}
message NodeSwapStatus { optional int64 capacity = 1 [(ptr) = true]; }
message ContainerImage { repeated string names = 1; optional int64 sizeBytes = 2; }
message AttachedVolume { optional string name = 1; optional string devicePath = 2; }
message NodeConfigStatus {
  optional NodeConfigSource assigned = 1 [(ptr) = true];
  optional NodeConfigSource active = 2 [(ptr) = true];
  optional NodeConfigSource lastKnownGood = 3 [(ptr) = true];
  optional string error = 4;
}
message NodeRuntimeHandler { optional string name = 1; optional NodeRuntimeHandlerFeatures features = 2 [(ptr) = true]; }
message NodeRuntimeHandlerFeatures {
  optional bool recursiveReadOnlyMounts = 1 [(ptr) = true];
  optional bool userNamespaces = 2 [(ptr) = true];
}
message NodeFeatures {
  optional bool supplementalGroupsPolicy = 1 [(ptr) = true];
}

message PersistentVolume {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PersistentVolumeSpec spec = 2;
  optional PersistentVolumeStatus status = 3;
}
message PersistentVolumeSpec {
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> capacity = 1;
  optional PersistentVolumeSource persistentVolumeSource = 2 [(inline) = true];
  repeated string accessModes = 3 [(listType) = "atomic"];
  optional ObjectReference claimRef = 4 [(ptr) = true];
  optional string persistentVolumeReclaimPolicy = 5;
  optional string storageClassName = 6;
  repeated string mountOptions = 7 [(listType) = "atomic"];
  optional string volumeMode = 8 [(ptr) = true];
  optional VolumeNodeAffinity nodeAffinity = 9 [(ptr) = true];
  optional string volumeAttributesClassName = 10 [(ptr) = true];
}
message PersistentVolumeSource {
  optional GCEPersistentDiskVolumeSource gcePersistentDisk = 1 [(ptr) = true];
  optional AWSElasticBlockStoreVolumeSource awsElasticBlockStore = 2 [(ptr) = true];
  optional HostPathVolumeSource hostPath = 3 [(ptr) = true];
  optional GlusterfsPersistentVolumeSource glusterfs = 4 [(ptr) = true];
  optional NFSVolumeSource nfs = 5 [(ptr) = true];
  optional RBDPersistentVolumeSource rbd = 6 [(ptr) = true];
  optional ISCSIPersistentVolumeSource iscsi = 7 [(ptr) = true];
  optional CinderPersistentVolumeSource cinder = 8 [(ptr) = true];
  optional CephFSPersistentVolumeSource cephfs = 9 [(ptr) = true];
  optional FCVolumeSource fc = 10 [(ptr) = true];
  optional FlockerVolumeSource flocker = 11 [(ptr) = true];
  optional FlexPersistentVolumeSource flexVolume = 12 [(ptr) = true];
  optional AzureFilePersistentVolumeSource azureFile = 13 [(ptr) = true];
  optional VsphereVirtualDiskVolumeSource vsphereVolume = 14 [(ptr) = true];
  optional QuobyteVolumeSource quobyte = 15 [(ptr) = true];
  optional AzureDiskVolumeSource azureDisk = 16 [(ptr) = true];
  optional PhotonPersistentDiskVolumeSource photonPersistentDisk = 17 [(ptr) = true];
  optional PortworxVolumeSource portworxVolume = 18 [(ptr) = true];
  optional ScaleIOPersistentVolumeSource scaleIO = 19 [(ptr) = true];
  optional LocalVolumeSource local = 20 [(ptr) = true];
  optional StorageOSPersistentVolumeSource storageos = 21 [(ptr) = true];
  optional CSIPersistentVolumeSource csi = 22 [(ptr) = true];
}
message PersistentVolumeStatus {
  optional string phase = 1;
  optional string message = 2;
  optional string reason = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastPhaseTransitionTime = 4 [(ptr) = true];
}
message VolumeNodeAffinity { optional NodeSelector required = 1 [(ptr) = true]; }
message GlusterfsPersistentVolumeSource {
  optional string endpoints = 1;
  optional string path = 2;
  optional bool readOnly = 3;
  optional string endpointsNamespace = 4 [(ptr) = true];
}
message RBDPersistentVolumeSource {
  repeated string monitors = 1;
  optional string image = 2;
  optional string fsType = 3;
  optional string pool = 4;
  optional string user = 5;
  optional string keyring = 6;
  optional SecretReference secretRef = 7 [(ptr) = true];
  optional bool readOnly = 8;
}
message ISCSIPersistentVolumeSource {
  optional string targetPortal = 1;
  optional string iqn = 2;
  optional int32 lun = 3 [(keep) = true];
  optional string iscsiInterface = 4;
  optional string fsType = 5;
  optional bool readOnly = 6;
  repeated string portals = 7;
  optional bool chapAuthDiscovery = 8;
  optional SecretReference secretRef = 10 [(ptr) = true];
  optional bool chapAuthSession = 11;
  optional string initiatorName = 12 [(ptr) = true];
}
message CinderPersistentVolumeSource {
  optional string volumeID = 1;
  optional string fsType = 2;
  optional bool readOnly = 3;
  optional SecretReference secretRef = 4 [(ptr) = true];
}
message CephFSPersistentVolumeSource {
  repeated string monitors = 1;
  optional string path = 2;
  optional string user = 3;
  optional string secretFile = 4;
  optional SecretReference secretRef = 5 [(ptr) = true];
  optional bool readOnly = 6;
}
message FlexPersistentVolumeSource {
  optional string driver = 1;
  optional string fsType = 2;
  optional SecretReference secretRef = 3 [(ptr) = true];
  optional bool readOnly = 4;
  map<string, string> options = 5;
}
message AzureFilePersistentVolumeSource {
  optional string secretName = 1;
  optional string shareName = 2;
  optional bool readOnly = 3;
  optional string secretNamespace = 4 [(ptr) = true];
}
message ScaleIOPersistentVolumeSource {
  optional string gateway = 1;
  optional string system = 2;
  optional SecretReference secretRef = 3 [(ptr) = true];
  optional bool sslEnabled = 4;
  optional string protectionDomain = 5;
  optional string storagePool = 6;
  optional string storageMode = 7;
  optional string volumeName = 8;
  optional string fsType = 9;
  optional bool readOnly = 10;
}
message LocalVolumeSource { optional string path = 1; optional string fsType = 2 [(ptr) = true]; }
message StorageOSPersistentVolumeSource {
  optional string volumeName = 1;
  optional string volumeNamespace = 2;
  optional string fsType = 3;
  optional bool readOnly = 4;
  optional ObjectReference secretRef = 5 [(ptr) = true];
}
message CSIPersistentVolumeSource {
  optional string driver = 1;
  optional string volumeHandle = 2;
  optional bool readOnly = 3;
  optional string fsType = 4;
  map<string, string> volumeAttributes = 5;
  optional SecretReference controllerPublishSecretRef = 6 [(ptr) = true];
  optional SecretReference nodeStageSecretRef = 7 [(ptr) = true];
  optional SecretReference nodePublishSecretRef = 8 [(ptr) = true];
  optional SecretReference controllerExpandSecretRef = 9 [(ptr) = true];
  optional SecretReference nodeExpandSecretRef = 10 [(ptr) = true];
}
message TopologySelectorTerm { repeated TopologySelectorLabelRequirement matchLabelExpressions = 1 [(listType) = "atomic"]; }
message TopologySelectorLabelRequirement { optional string key = 1; repeated string values = 2 [(listType) = "atomic"]; }

message PersistentVolumeClaim {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PersistentVolumeClaimSpec spec = 2;
  optional PersistentVolumeClaimStatus status = 3;
}
message PersistentVolumeClaimSpec {
  repeated string accessModes = 1;
  optional VolumeResourceRequirements resources = 2;
  optional string volumeName = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 4 [(ptr) = true];
  optional string storageClassName = 5 [(ptr) = true];
  optional string volumeMode = 6 [(ptr) = true];
  optional TypedLocalObjectReference dataSource = 7 [(ptr) = true];
  optional TypedObjectReference dataSourceRef = 8 [(ptr) = true];
  optional string volumeAttributesClassName = 9 [(ptr) = true];
}
message VolumeResourceRequirements {
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> limits = 1;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> requests = 2;
}
message TypedLocalObjectReference {
  optional string apiGroup = 1 [(ptr) = true];
  optional string kind = 2;
  optional string name = 3;
}
message TypedObjectReference {
  optional string apiGroup = 1 [(ptr) = true];
  optional string kind = 2;
  optional string name = 3;
  optional string namespace = 4 [(ptr) = true];
}
message PersistentVolumeClaimStatus {
  optional string phase = 1;
  repeated string accessModes = 2;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> capacity = 3;
  repeated PersistentVolumeClaimCondition conditions = 4;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> allocatedResources = 5;
  map<string, string> allocatedResourceStatuses = 7;
  optional string currentVolumeAttributesClassName = 8 [(ptr) = true];
  optional ModifyVolumeStatus modifyVolumeStatus = 9 [(ptr) = true];
}
message PersistentVolumeClaimCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastProbeTime = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message ModifyVolumeStatus { optional string targetVolumeAttributesClassName = 1; optional string status = 2; }

message ResourceQuota {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ResourceQuotaSpec spec = 2;
  optional ResourceQuotaStatus status = 3;
}
message ResourceQuotaSpec {
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> hard = 1;
  repeated string scopes = 2;
  optional ScopeSelector scopeSelector = 3 [(ptr) = true];
}
message ScopeSelector { repeated ScopedResourceSelectorRequirement matchExpressions = 1; }
message ScopedResourceSelectorRequirement { optional string scopeName = 1; optional string operator = 2; repeated string values = 3; }
message ResourceQuotaStatus {
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> hard = 1;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> used = 2;
}

message LimitRange {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional LimitRangeSpec spec = 2;
}
message LimitRangeSpec { repeated LimitRangeItem limits = 1; }
message LimitRangeItem {
  optional string type = 1;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> max = 2;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> min = 3;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> default = 4;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> defaultRequest = 5;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> maxLimitRequestRatio = 6;
}

message ReplicationController {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ReplicationControllerSpec spec = 2;
  optional ReplicationControllerStatus status = 3;
}
message ReplicationControllerSpec {
  optional int32 replicas = 1 [(ptr) = true];
  map<string, string> selector = 2 [(mapType) = "atomic"];
  optional PodTemplateSpec template = 3 [(ptr) = true];
  optional int32 minReadySeconds = 4;
}
message ReplicationControllerStatus {
  optional int32 replicas = 1 [(keep) = true];
  optional int32 fullyLabeledReplicas = 2;
  optional int64 observedGeneration = 3;
  optional int32 readyReplicas = 4;
  optional int32 availableReplicas = 5;
  repeated ReplicationControllerCondition conditions = 6 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message ReplicationControllerCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}

message PodTemplate {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PodTemplateSpec template = 2;
}
message PodTemplateSpec {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PodSpec spec = 2;
}

// ---- Pod ----
message Pod {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PodSpec spec = 2;
  optional PodStatus status = 3;
}
message PodSpec {
  repeated Volume volumes = 1 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  repeated Container containers = 2 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name", (keep) = true];
  optional string restartPolicy = 3;
  optional int64 terminationGracePeriodSeconds = 4 [(ptr) = true];
  optional int64 activeDeadlineSeconds = 5 [(ptr) = true];
  optional string dnsPolicy = 6;
  map<string, string> nodeSelector = 7 [(mapType) = "atomic"];
  optional string serviceAccountName = 8;
  optional string serviceAccount = 9;
  optional string nodeName = 10;
  optional bool hostNetwork = 11;
  optional bool hostPID = 12;
  optional bool hostIPC = 13;
  optional PodSecurityContext securityContext = 14 [(ptr) = true];
  repeated LocalObjectReference imagePullSecrets = 15 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  optional string hostname = 16;
  optional string subdomain = 17;
  optional Affinity affinity = 18 [(ptr) = true];
  optional string schedulerName = 19;
  repeated Container initContainers = 20 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  optional bool automountServiceAccountToken = 21 [(ptr) = true];
  repeated Toleration tolerations = 22;
  repeated HostAlias hostAliases = 23 [(patchStrategy) = "merge", (patchMergeKey) = "ip", (listType) = "map", (listMapKeys) = "ip"];
  optional string priorityClassName = 24;
  optional int32 priority = 25 [(ptr) = true];
  optional PodDNSConfig dnsConfig = 26 [(ptr) = true];
  optional bool shareProcessNamespace = 27 [(ptr) = true];
  repeated PodReadinessGate readinessGates = 28;
  optional string runtimeClassName = 29 [(ptr) = true];
  optional bool enableServiceLinks = 30 [(ptr) = true];
  optional string preemptionPolicy = 31 [(ptr) = true];
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> overhead = 32;
  repeated TopologySpreadConstraint topologySpreadConstraints = 33 [(patchStrategy) = "merge", (patchMergeKey) = "topologyKey", (listType) = "map", (listMapKeys) = "topologyKey,whenUnsatisfiable"];
  repeated EphemeralContainer ephemeralContainers = 34 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  optional bool setHostnameAsFQDN = 35 [(ptr) = true];
  optional PodOS os = 36 [(ptr) = true];
  optional bool hostUsers = 37 [(ptr) = true];
  repeated PodSchedulingGate schedulingGates = 38 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  repeated PodResourceClaim resourceClaims = 39 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  optional ResourceRequirements resources = 40 [(ptr) = true];
  optional string hostnameOverride = 41 [(ptr) = true];
  optional WorkloadReference workloadRef = 42 [(ptr) = true];
}
message PodSecurityContext {
  optional SELinuxOptions seLinuxOptions = 1 [(ptr) = true];
  optional int64 runAsUser = 2 [(ptr) = true];
  optional bool runAsNonRoot = 3 [(ptr) = true];
  repeated int64 supplementalGroups = 4;
  optional int64 fsGroup = 5 [(ptr) = true];
  optional int64 runAsGroup = 6 [(ptr) = true];
  repeated Sysctl sysctls = 7;
  optional WindowsSecurityContextOptions windowsOptions = 8 [(ptr) = true];
  optional string fsGroupChangePolicy = 9 [(ptr) = true];
  optional SeccompProfile seccompProfile = 10 [(ptr) = true];
  optional AppArmorProfile appArmorProfile = 11 [(ptr) = true];
  optional string supplementalGroupsPolicy = 12 [(ptr) = true];
  optional string seLinuxChangePolicy = 13 [(ptr) = true];
}
message Sysctl { optional string name = 1; optional string value = 2; }
message SELinuxOptions { optional string user = 1; optional string role = 2; optional string type = 3; optional string level = 4; }
message WindowsSecurityContextOptions {
  optional string gmsaCredentialSpecName = 1 [(ptr) = true];
  optional string gmsaCredentialSpec = 2 [(ptr) = true];
  optional string runAsUserName = 3 [(ptr) = true];
  optional bool hostProcess = 4 [(ptr) = true];
}
message SeccompProfile { optional string type = 1; optional string localhostProfile = 2 [(ptr) = true]; }
message AppArmorProfile { optional string type = 1; optional string localhostProfile = 2 [(ptr) = true]; }
message LocalObjectReference { option (structType) = "atomic"; optional string name = 1; }
message ObjectReference {
  optional string kind = 1;
  optional string namespace = 2;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional string resourceVersion = 6;
  optional string fieldPath = 7;
}
message SecretReference { optional string name = 1; optional string namespace = 2; }
message HostAlias { optional string ip = 1; repeated string hostnames = 2; }
message PodDNSConfig { repeated string nameservers = 1; repeated string searches = 2; repeated PodDNSConfigOption options = 3; }
message PodDNSConfigOption { optional string name = 1; optional string value = 2 [(ptr) = true]; }
message PodReadinessGate { optional string conditionType = 1; }
message PodOS { optional string name = 1; }
message PodSchedulingGate { optional string name = 1; }
message PodResourceClaim {
  optional string name = 1;
  optional string resourceClaimName = 3 [(ptr) = true];
  optional string resourceClaimTemplateName = 4 [(ptr) = true];
}
message WorkloadReference { optional string name = 1; optional string podGroup = 2; optional string podGroupReplicaKey = 3; }
message Toleration {
  optional string key = 1;
  optional string operator = 2;
  optional string value = 3;
  optional string effect = 4;
  optional int64 tolerationSeconds = 5 [(ptr) = true];
}
message TopologySpreadConstraint {
  optional int32 maxSkew = 1;
  optional string topologyKey = 2;
  optional string whenUnsatisfiable = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector labelSelector = 4 [(ptr) = true];
  optional int32 minDomains = 5 [(ptr) = true];
  optional string nodeAffinityPolicy = 6 [(ptr) = true];
  optional string nodeTaintsPolicy = 7 [(ptr) = true];
  repeated string matchLabelKeys = 8;
}

// ---- affinity ----
message Affinity {
  optional NodeAffinity nodeAffinity = 1 [(ptr) = true];
  optional PodAffinity podAffinity = 2 [(ptr) = true];
  optional PodAntiAffinity podAntiAffinity = 3 [(ptr) = true];
}
message NodeAffinity {
  optional NodeSelector requiredDuringSchedulingIgnoredDuringExecution = 1 [(ptr) = true];
  repeated PreferredSchedulingTerm preferredDuringSchedulingIgnoredDuringExecution = 2;
}
message NodeSelector { option (structType) = "atomic"; repeated NodeSelectorTerm nodeSelectorTerms = 1; }
message NodeSelectorTerm { repeated NodeSelectorRequirement matchExpressions = 1; repeated NodeSelectorRequirement matchFields = 2; }
message NodeSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message PreferredSchedulingTerm { optional int32 weight = 1; optional NodeSelectorTerm preference = 2; }
message PodAffinity {
  repeated PodAffinityTerm requiredDuringSchedulingIgnoredDuringExecution = 1;
  repeated WeightedPodAffinityTerm preferredDuringSchedulingIgnoredDuringExecution = 2;
}
message PodAntiAffinity {
  repeated PodAffinityTerm requiredDuringSchedulingIgnoredDuringExecution = 1;
  repeated WeightedPodAffinityTerm preferredDuringSchedulingIgnoredDuringExecution = 2;
}
message PodAffinityTerm {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector labelSelector = 1 [(ptr) = true];
  repeated string namespaces = 2;
  optional string topologyKey = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector namespaceSelector = 4 [(ptr) = true];
  repeated string matchLabelKeys = 5;
  repeated string mismatchLabelKeys = 6;
}
message WeightedPodAffinityTerm { optional int32 weight = 1; optional PodAffinityTerm podAffinityTerm = 2; }

// ---- containers ----
message Container {
  optional string name = 1;
  optional string image = 2;
  repeated string command = 3;
  repeated string args = 4;
  optional string workingDir = 5;
  repeated ContainerPort ports = 6 [(patchStrategy) = "merge", (patchMergeKey) = "containerPort", (listType) = "map", (listMapKeys) = "containerPort,protocol"];
  repeated EnvVar env = 7 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  optional ResourceRequirements resources = 8;
  repeated VolumeMount volumeMounts = 9 [(patchStrategy) = "merge", (patchMergeKey) = "mountPath", (listType) = "map", (listMapKeys) = "mountPath"];
  optional Probe livenessProbe = 10 [(ptr) = true];
  optional Probe readinessProbe = 11 [(ptr) = true];
  optional Lifecycle lifecycle = 12 [(ptr) = true];
  optional string terminationMessagePath = 13;
  optional string imagePullPolicy = 14;
  optional SecurityContext securityContext = 15 [(ptr) = true];
  optional bool stdin = 16;
  optional bool stdinOnce = 17;
  optional bool tty = 18;
  repeated EnvFromSource envFrom = 19;
  optional string terminationMessagePolicy = 20;
  repeated VolumeDevice volumeDevices = 21 [(patchStrategy) = "merge", (patchMergeKey) = "devicePath", (listType) = "map", (listMapKeys) = "devicePath"];
  optional Probe startupProbe = 22 [(ptr) = true];
  repeated ContainerResizePolicy resizePolicy = 23;
  optional string restartPolicy = 24 [(ptr) = true];
  repeated ContainerRestartRule restartPolicyRules = 25;
}
// Same wire shape as Container; upstream keeps it separate so it can document ephemeral limits.
message EphemeralContainerCommon {
  optional string name = 1;
  optional string image = 2;
  repeated string command = 3;
  repeated string args = 4;
  optional string workingDir = 5;
  repeated ContainerPort ports = 6 [(patchStrategy) = "merge", (patchMergeKey) = "containerPort", (listType) = "map", (listMapKeys) = "containerPort,protocol"];
  repeated EnvVar env = 7 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  optional ResourceRequirements resources = 8;
  repeated VolumeMount volumeMounts = 9 [(patchStrategy) = "merge", (patchMergeKey) = "mountPath", (listType) = "map", (listMapKeys) = "mountPath"];
  optional Probe livenessProbe = 10 [(ptr) = true];
  optional Probe readinessProbe = 11 [(ptr) = true];
  optional Lifecycle lifecycle = 12 [(ptr) = true];
  optional string terminationMessagePath = 13;
  optional string imagePullPolicy = 14;
  optional SecurityContext securityContext = 15 [(ptr) = true];
  optional bool stdin = 16;
  optional bool stdinOnce = 17;
  optional bool tty = 18;
  repeated EnvFromSource envFrom = 19;
  optional string terminationMessagePolicy = 20;
  repeated VolumeDevice volumeDevices = 21 [(patchStrategy) = "merge", (patchMergeKey) = "devicePath", (listType) = "map", (listMapKeys) = "devicePath"];
  optional Probe startupProbe = 22 [(ptr) = true];
  repeated ContainerResizePolicy resizePolicy = 23;
  optional string restartPolicy = 24 [(ptr) = true];
  repeated ContainerRestartRule restartPolicyRules = 25;
}
message EphemeralContainer {
  optional EphemeralContainerCommon ephemeralContainerCommon = 1 [(inline) = true];
  optional string targetContainerName = 2;
}
message ContainerPort {
  optional string name = 1;
  optional int32 hostPort = 2;
  optional int32 containerPort = 3;
  optional string protocol = 4 [(default) = "TCP"];
  optional string hostIP = 5;
}
message ContainerResizePolicy { optional string resourceName = 1; optional string restartPolicy = 2; }
message ContainerRestartRule { optional string action = 1; optional ContainerRestartRuleOnExitCodes exitCodes = 2 [(ptr) = true]; }
message ContainerRestartRuleOnExitCodes { optional string operator = 1; repeated int32 values = 2; }
message EnvVar { optional string name = 1; optional string value = 2; optional EnvVarSource valueFrom = 3 [(ptr) = true]; }
message EnvVarSource {
  optional ObjectFieldSelector fieldRef = 1 [(ptr) = true];
  optional ResourceFieldSelector resourceFieldRef = 2 [(ptr) = true];
  optional ConfigMapKeySelector configMapKeyRef = 3 [(ptr) = true];
  optional SecretKeySelector secretKeyRef = 4 [(ptr) = true];
  optional FileKeySelector fileKeyRef = 5 [(ptr) = true];
}
message ObjectFieldSelector { option (structType) = "atomic"; optional string apiVersion = 1; optional string fieldPath = 2; }
message ResourceFieldSelector { option (structType) = "atomic";
  optional string containerName = 1;
  optional string resource = 2;
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity divisor = 3;
}
message ConfigMapKeySelector { option (structType) = "atomic";
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  optional string key = 2;
  optional bool optional = 3 [(ptr) = true];
}
message SecretKeySelector { option (structType) = "atomic";
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  optional string key = 2;
  optional bool optional = 3 [(ptr) = true];
}
message FileKeySelector {
  optional string volumeName = 1;
  optional string path = 2;
  optional string key = 3;
  optional bool optional = 4 [(ptr) = true];
}
message EnvFromSource {
  optional string prefix = 1;
  optional ConfigMapEnvSource configMapRef = 2 [(ptr) = true];
  optional SecretEnvSource secretRef = 3 [(ptr) = true];
}
message ConfigMapEnvSource {
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  optional bool optional = 2 [(ptr) = true];
}
message SecretEnvSource {
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  optional bool optional = 2 [(ptr) = true];
}
message ResourceRequirements {
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> limits = 1;
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> requests = 2;
  repeated ResourceClaim claims = 3 [(listType) = "map", (listMapKeys) = "name"];
}
message ResourceClaim { optional string name = 1; optional string request = 2; }
message VolumeMount {
  optional string name = 1;
  optional bool readOnly = 2;
  optional string mountPath = 3;
  optional string subPath = 4;
  optional string mountPropagation = 5 [(ptr) = true];
  optional string subPathExpr = 6;
  optional string recursiveReadOnly = 7 [(ptr) = true];
}
message VolumeDevice { optional string name = 1; optional string devicePath = 2; }
message Probe {
  optional ProbeHandler handler = 1 [(inline) = true];
  optional int32 initialDelaySeconds = 2;
  optional int32 timeoutSeconds = 3;
  optional int32 periodSeconds = 4;
  optional int32 successThreshold = 5;
  optional int32 failureThreshold = 6;
  optional int64 terminationGracePeriodSeconds = 7 [(ptr) = true];
}
message ProbeHandler {
  optional ExecAction exec = 1 [(ptr) = true];
  optional HTTPGetAction httpGet = 2 [(ptr) = true];
  optional TCPSocketAction tcpSocket = 3 [(ptr) = true];
  optional GRPCAction grpc = 4 [(ptr) = true];
}
message ExecAction { repeated string command = 1; }
message HTTPGetAction {
  optional string path = 1;
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString port = 2;
  optional string host = 3;
  optional string scheme = 4;
  repeated HTTPHeader httpHeaders = 5;
}
message HTTPHeader { optional string name = 1; optional string value = 2; }
message TCPSocketAction { optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString port = 1; optional string host = 2; }
message GRPCAction { optional int32 port = 1 [(keep) = true]; optional string service = 2 [(ptr) = true]; }
message Lifecycle {
  optional LifecycleHandler postStart = 1 [(ptr) = true];
  optional LifecycleHandler preStop = 2 [(ptr) = true];
  optional string stopSignal = 3 [(ptr) = true];
}
message LifecycleHandler {
  optional ExecAction exec = 1 [(ptr) = true];
  optional HTTPGetAction httpGet = 2 [(ptr) = true];
  optional TCPSocketAction tcpSocket = 3 [(ptr) = true];
  optional SleepAction sleep = 4 [(ptr) = true];
}
message SleepAction { optional int64 seconds = 1 [(keep) = true]; }
message SecurityContext {
  optional Capabilities capabilities = 1 [(ptr) = true];
  optional bool privileged = 2 [(ptr) = true];
  optional SELinuxOptions seLinuxOptions = 3 [(ptr) = true];
  optional int64 runAsUser = 4 [(ptr) = true];
  optional bool runAsNonRoot = 5 [(ptr) = true];
  optional bool readOnlyRootFilesystem = 6 [(ptr) = true];
  optional bool allowPrivilegeEscalation = 7 [(ptr) = true];
  optional int64 runAsGroup = 8 [(ptr) = true];
  optional string procMount = 9 [(ptr) = true];
  optional WindowsSecurityContextOptions windowsOptions = 10 [(ptr) = true];
  optional SeccompProfile seccompProfile = 11 [(ptr) = true];
  optional AppArmorProfile appArmorProfile = 12 [(ptr) = true];
}
message Capabilities { repeated string add = 1; repeated string drop = 2; }

// ---- volumes ----
message Volume {
  optional string name = 1;
  optional VolumeSource volumeSource = 2 [(inline) = true];
}
message VolumeSource {
  optional HostPathVolumeSource hostPath = 1 [(ptr) = true];
  optional EmptyDirVolumeSource emptyDir = 2 [(ptr) = true];
  optional GCEPersistentDiskVolumeSource gcePersistentDisk = 3 [(ptr) = true];
  optional AWSElasticBlockStoreVolumeSource awsElasticBlockStore = 4 [(ptr) = true];
  optional GitRepoVolumeSource gitRepo = 5 [(ptr) = true];
  optional SecretVolumeSource secret = 6 [(ptr) = true];
  optional NFSVolumeSource nfs = 7 [(ptr) = true];
  optional ISCSIVolumeSource iscsi = 8 [(ptr) = true];
  optional GlusterfsVolumeSource glusterfs = 9 [(ptr) = true];
  optional PersistentVolumeClaimVolumeSource persistentVolumeClaim = 10 [(ptr) = true];
  optional RBDVolumeSource rbd = 11 [(ptr) = true];
  optional FlexVolumeSource flexVolume = 12 [(ptr) = true];
  optional CinderVolumeSource cinder = 13 [(ptr) = true];
  optional CephFSVolumeSource cephfs = 14 [(ptr) = true];
  optional FlockerVolumeSource flocker = 15 [(ptr) = true];
  optional DownwardAPIVolumeSource downwardAPI = 16 [(ptr) = true];
  optional FCVolumeSource fc = 17 [(ptr) = true];
  optional AzureFileVolumeSource azureFile = 18 [(ptr) = true];
  optional ConfigMapVolumeSource configMap = 19 [(ptr) = true];
  optional VsphereVirtualDiskVolumeSource vsphereVolume = 20 [(ptr) = true];
  optional QuobyteVolumeSource quobyte = 21 [(ptr) = true];
  optional AzureDiskVolumeSource azureDisk = 22 [(ptr) = true];
  optional PhotonPersistentDiskVolumeSource photonPersistentDisk = 23 [(ptr) = true];
  optional PortworxVolumeSource portworxVolume = 24 [(ptr) = true];
  optional ScaleIOVolumeSource scaleIO = 25 [(ptr) = true];
  optional ProjectedVolumeSource projected = 26 [(ptr) = true];
  optional StorageOSVolumeSource storageos = 27 [(ptr) = true];
  optional CSIVolumeSource csi = 28 [(ptr) = true];
  optional EphemeralVolumeSource ephemeral = 29 [(ptr) = true];
  optional ImageVolumeSource image = 30 [(ptr) = true];
}
message HostPathVolumeSource { optional string path = 1; optional string type = 2 [(ptr) = true]; }
message EmptyDirVolumeSource {
  optional string medium = 1;
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity sizeLimit = 2 [(ptr) = true];
}
message GCEPersistentDiskVolumeSource { optional string pdName = 1; optional string fsType = 2; optional int32 partition = 3; optional bool readOnly = 4; }
message AWSElasticBlockStoreVolumeSource { optional string volumeID = 1; optional string fsType = 2; optional int32 partition = 3; optional bool readOnly = 4; }
message GitRepoVolumeSource { optional string repository = 1; optional string revision = 2; optional string directory = 3; }
message SecretVolumeSource {
  optional string secretName = 1;
  repeated KeyToPath items = 2;
  optional int32 defaultMode = 3 [(ptr) = true];
  optional bool optional = 4 [(ptr) = true];
}
message NFSVolumeSource { optional string server = 1; optional string path = 2; optional bool readOnly = 3; }
message ISCSIVolumeSource {
  optional string targetPortal = 1;
  optional string iqn = 2;
  optional int32 lun = 3;
  optional string iscsiInterface = 4;
  optional string fsType = 5;
  optional bool readOnly = 6;
  repeated string portals = 7;
  optional bool chapAuthDiscovery = 8;
  optional LocalObjectReference secretRef = 10 [(ptr) = true];
  optional bool chapAuthSession = 11;
  optional string initiatorName = 12 [(ptr) = true];
}
message GlusterfsVolumeSource { optional string endpoints = 1; optional string path = 2; optional bool readOnly = 3; }
message PersistentVolumeClaimVolumeSource { optional string claimName = 1; optional bool readOnly = 2; }
message RBDVolumeSource {
  repeated string monitors = 1;
  optional string image = 2;
  optional string fsType = 3;
  optional string pool = 4;
  optional string user = 5;
  optional string keyring = 6;
  optional LocalObjectReference secretRef = 7 [(ptr) = true];
  optional bool readOnly = 8;
}
message FlexVolumeSource {
  optional string driver = 1;
  optional string fsType = 2;
  optional LocalObjectReference secretRef = 3 [(ptr) = true];
  optional bool readOnly = 4;
  map<string, string> options = 5;
}
message CinderVolumeSource {
  optional string volumeID = 1;
  optional string fsType = 2;
  optional bool readOnly = 3;
  optional LocalObjectReference secretRef = 4 [(ptr) = true];
}
message CephFSVolumeSource {
  repeated string monitors = 1;
  optional string path = 2;
  optional string user = 3;
  optional string secretFile = 4;
  optional LocalObjectReference secretRef = 5 [(ptr) = true];
  optional bool readOnly = 6;
}
message FlockerVolumeSource { optional string datasetName = 1; optional string datasetUUID = 2; }
message DownwardAPIVolumeSource { repeated DownwardAPIVolumeFile items = 1; optional int32 defaultMode = 2 [(ptr) = true]; }
message DownwardAPIVolumeFile {
  optional string path = 1;
  optional ObjectFieldSelector fieldRef = 2 [(ptr) = true];
  optional ResourceFieldSelector resourceFieldRef = 3 [(ptr) = true];
  optional int32 mode = 4 [(ptr) = true];
}
message FCVolumeSource {
  repeated string targetWWNs = 1;
  optional int32 lun = 2 [(ptr) = true];
  optional string fsType = 3;
  optional bool readOnly = 4;
  repeated string wwids = 5;
}
message AzureFileVolumeSource { optional string secretName = 1; optional string shareName = 2; optional bool readOnly = 3; }
message ConfigMapVolumeSource {
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  repeated KeyToPath items = 2;
  optional int32 defaultMode = 3 [(ptr) = true];
  optional bool optional = 4 [(ptr) = true];
}
message VsphereVirtualDiskVolumeSource {
  optional string volumePath = 1;
  optional string fsType = 2;
  optional string storagePolicyName = 3;
  optional string storagePolicyID = 4;
}
message QuobyteVolumeSource {
  optional string registry = 1;
  optional string volume = 2;
  optional bool readOnly = 3;
  optional string user = 4;
  optional string group = 5;
  optional string tenant = 6;
}
message AzureDiskVolumeSource {
  optional string diskName = 1;
  optional string diskURI = 2;
  optional string cachingMode = 3 [(ptr) = true];
  optional string fsType = 4 [(ptr) = true];
  optional bool readOnly = 5 [(ptr) = true];
  optional string kind = 6 [(ptr) = true];
}
message PhotonPersistentDiskVolumeSource { optional string pdID = 1; optional string fsType = 2; }
message PortworxVolumeSource { optional string volumeID = 1; optional string fsType = 2; optional bool readOnly = 3; }
message ScaleIOVolumeSource {
  optional string gateway = 1;
  optional string system = 2;
  optional LocalObjectReference secretRef = 3 [(ptr) = true];
  optional bool sslEnabled = 4;
  optional string protectionDomain = 5;
  optional string storagePool = 6;
  optional string storageMode = 7;
  optional string volumeName = 8;
  optional string fsType = 9;
  optional bool readOnly = 10;
}
message ProjectedVolumeSource { repeated VolumeProjection sources = 1; optional int32 defaultMode = 2 [(ptr) = true]; }
message VolumeProjection {
  optional SecretProjection secret = 1 [(ptr) = true];
  optional DownwardAPIProjection downwardAPI = 2 [(ptr) = true];
  optional ConfigMapProjection configMap = 3 [(ptr) = true];
  optional ServiceAccountTokenProjection serviceAccountToken = 4 [(ptr) = true];
  optional ClusterTrustBundleProjection clusterTrustBundle = 5 [(ptr) = true];
  optional PodCertificateProjection podCertificate = 6 [(ptr) = true];
}
message SecretProjection {
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  repeated KeyToPath items = 2;
  optional bool optional = 4 [(ptr) = true];
}
message ConfigMapProjection {
  optional LocalObjectReference localObjectReference = 1 [(inline) = true];
  repeated KeyToPath items = 2;
  optional bool optional = 4 [(ptr) = true];
}
message DownwardAPIProjection { repeated DownwardAPIVolumeFile items = 1; }
message ServiceAccountTokenProjection {
  optional string audience = 1;
  optional int64 expirationSeconds = 2 [(ptr) = true];
  optional string path = 3;
}
message ClusterTrustBundleProjection {
  optional string name = 1 [(ptr) = true];
  optional string signerName = 2 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector labelSelector = 3 [(ptr) = true];
  optional string path = 4;
  optional bool optional = 5 [(ptr) = true];
}
message PodCertificateProjection {
  optional string signerName = 1;
  optional string keyType = 2;
  optional int32 maxExpirationSeconds = 3 [(ptr) = true];
  optional string credentialBundlePath = 4;
  optional string keyPath = 5;
  optional string certificateChainPath = 6;
  map<string, string> userAnnotations = 7;
}
message KeyToPath { optional string key = 1; optional string path = 2; optional int32 mode = 3 [(ptr) = true]; }
message StorageOSVolumeSource {
  optional string volumeName = 1;
  optional string volumeNamespace = 2;
  optional string fsType = 3;
  optional bool readOnly = 4;
  optional LocalObjectReference secretRef = 5 [(ptr) = true];
}
message CSIVolumeSource {
  optional string driver = 1;
  optional bool readOnly = 2 [(ptr) = true];
  optional string fsType = 3 [(ptr) = true];
  map<string, string> volumeAttributes = 4;
  optional LocalObjectReference nodePublishSecretRef = 5 [(ptr) = true];
}
message EphemeralVolumeSource { optional PersistentVolumeClaimTemplate volumeClaimTemplate = 1 [(ptr) = true]; }
message PersistentVolumeClaimTemplate {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PersistentVolumeClaimSpec spec = 2;
}
message ImageVolumeSource { optional string reference = 1; optional string pullPolicy = 2; }

// ---- pod status ----
message PodStatus {
  optional string phase = 1;
  repeated PodCondition conditions = 2 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  optional string message = 3;
  optional string reason = 4;
  optional string hostIP = 5;
  optional string podIP = 6;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time startTime = 7 [(ptr) = true];
  repeated ContainerStatus containerStatuses = 8;
  optional string qosClass = 9;
  repeated ContainerStatus initContainerStatuses = 10;
  optional string nominatedNodeName = 11;
  repeated PodIP podIPs = 12 [(patchStrategy) = "merge", (patchMergeKey) = "ip", (listType) = "map", (listMapKeys) = "ip"];
  repeated ContainerStatus ephemeralContainerStatuses = 13;
  optional string resize = 14;
  repeated PodResourceClaimStatus resourceClaimStatuses = 15 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
  repeated HostIP hostIPs = 16 [(patchStrategy) = "merge", (patchMergeKey) = "ip", (listType) = "map", (listMapKeys) = "ip"];
  optional int64 observedGeneration = 17;
  optional PodExtendedResourceClaimStatus extendedResourceClaimStatus = 18 [(ptr) = true];
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> allocatedResources = 19;
  optional ResourceRequirements resources = 20 [(ptr) = true];
}
message PodCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastProbeTime = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
  optional int64 observedGeneration = 7;
}
message PodIP { optional string ip = 1; }
message HostIP { optional string ip = 1; }
message PodResourceClaimStatus { optional string name = 1; optional string resourceClaimName = 2 [(ptr) = true]; }
message PodExtendedResourceClaimStatus { repeated ContainerExtendedResourceRequest requestMappings = 1; optional string resourceClaimName = 2; }
message ContainerExtendedResourceRequest { optional string containerName = 1; optional string resourceName = 2; optional string requestName = 3; }
message ContainerStatus {
  optional string name = 1;
  optional ContainerState state = 2;
  optional ContainerState lastState = 3;
  optional bool ready = 4 [(keep) = true];
  optional int32 restartCount = 5 [(keep) = true];
  optional string image = 6;
  optional string imageID = 7;
  optional string containerID = 8;
  optional bool started = 9 [(ptr) = true];
  map<string, .k8s.io.apimachinery.pkg.api.resource.Quantity> allocatedResources = 10;
  optional ResourceRequirements resources = 11 [(ptr) = true];
  repeated VolumeMountStatus volumeMounts = 12;
  optional ContainerUser user = 13 [(ptr) = true];
  repeated ResourceStatus allocatedResourcesStatus = 14;
  optional string stopSignal = 15 [(ptr) = true];
}
message ContainerState {
  optional ContainerStateWaiting waiting = 1 [(ptr) = true];
  optional ContainerStateRunning running = 2 [(ptr) = true];
  optional ContainerStateTerminated terminated = 3 [(ptr) = true];
}
message ContainerStateWaiting { optional string reason = 1; optional string message = 2; }
message ContainerStateRunning { optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time startedAt = 1; }
message ContainerStateTerminated {
  optional int32 exitCode = 1 [(keep) = true];
  optional int32 signal = 2;
  optional string reason = 3;
  optional string message = 4;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time startedAt = 5;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time finishedAt = 6;
  optional string containerID = 7;
}
message VolumeMountStatus {
  optional string name = 1;
  optional string mountPath = 2;
  optional bool readOnly = 3;
  optional string recursiveReadOnly = 4 [(ptr) = true];
  optional VolumeStatus volumeStatus = 5 [(inline) = true];
}
message VolumeStatus { optional ImageVolumeStatus image = 1 [(ptr) = true]; }
message ImageVolumeStatus { optional string imageRef = 1; }
message ContainerUser { optional LinuxContainerUser linux = 1 [(ptr) = true]; }
message LinuxContainerUser {
  optional int64 uid = 1 [(keep) = true];
  optional int64 gid = 2 [(keep) = true];
  repeated int64 supplementalGroups = 3;
}
message ResourceStatus { optional string name = 1; repeated ResourceHealth resources = 2; }
message ResourceHealth { optional string resourceID = 1; optional string health = 2; optional string message = 6 [(ptr) = true]; }
`;

export const APPS_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.apps.v1;

message Deployment {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional DeploymentSpec spec = 2;
  optional DeploymentStatus status = 3;
}
message DeploymentSpec {
  optional int32 replicas = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2 [(ptr) = true];
  optional .k8s.io.api.core.v1.PodTemplateSpec template = 3;
  optional DeploymentStrategy strategy = 4;
  optional int32 minReadySeconds = 5;
  optional int32 revisionHistoryLimit = 6 [(ptr) = true];
  optional bool paused = 7;
  optional int32 progressDeadlineSeconds = 9 [(ptr) = true];
  optional string podReplacementPolicy = 10 [(ptr) = true];
}
message DeploymentStrategy { optional string type = 1; optional RollingUpdateDeployment rollingUpdate = 2 [(ptr) = true]; }
message RollingUpdateDeployment {
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString maxUnavailable = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString maxSurge = 2 [(ptr) = true];
}
message DeploymentStatus {
  optional int64 observedGeneration = 1;
  optional int32 replicas = 2;
  optional int32 updatedReplicas = 3;
  optional int32 availableReplicas = 4;
  optional int32 unavailableReplicas = 5;
  repeated DeploymentCondition conditions = 6 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  optional int32 readyReplicas = 7;
  optional int32 collisionCount = 8 [(ptr) = true];
  optional int32 terminatingReplicas = 9 [(ptr) = true];
}
message DeploymentCondition {
  optional string type = 1;
  optional string status = 2;
  optional string reason = 4;
  optional string message = 5;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastUpdateTime = 6;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 7;
}

message ReplicaSet {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ReplicaSetSpec spec = 2;
  optional ReplicaSetStatus status = 3;
}
message ReplicaSetSpec {
  optional int32 replicas = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2 [(ptr) = true];
  optional .k8s.io.api.core.v1.PodTemplateSpec template = 3;
  optional int32 minReadySeconds = 4;
}
message ReplicaSetStatus {
  optional int32 replicas = 1 [(keep) = true];
  optional int32 fullyLabeledReplicas = 2;
  optional int64 observedGeneration = 3;
  optional int32 readyReplicas = 4;
  optional int32 availableReplicas = 5;
  repeated ReplicaSetCondition conditions = 6 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  optional int32 terminatingReplicas = 7 [(ptr) = true];
}
message ReplicaSetCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}

message DaemonSet {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional DaemonSetSpec spec = 2;
  optional DaemonSetStatus status = 3;
}
message DaemonSetSpec {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 1 [(ptr) = true];
  optional .k8s.io.api.core.v1.PodTemplateSpec template = 2;
  optional DaemonSetUpdateStrategy updateStrategy = 3;
  optional int32 minReadySeconds = 4;
  optional int32 revisionHistoryLimit = 6 [(ptr) = true];
}
message DaemonSetUpdateStrategy { optional string type = 1; optional RollingUpdateDaemonSet rollingUpdate = 2 [(ptr) = true]; }
message RollingUpdateDaemonSet {
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString maxUnavailable = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString maxSurge = 2 [(ptr) = true];
}
message DaemonSetStatus {
  optional int32 currentNumberScheduled = 1 [(keep) = true];
  optional int32 numberMisscheduled = 2 [(keep) = true];
  optional int32 desiredNumberScheduled = 3 [(keep) = true];
  optional int32 numberReady = 4 [(keep) = true];
  optional int64 observedGeneration = 5;
  optional int32 updatedNumberScheduled = 6;
  optional int32 numberAvailable = 7;
  optional int32 numberUnavailable = 8;
  optional int32 collisionCount = 9 [(ptr) = true];
  repeated DaemonSetCondition conditions = 10 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message DaemonSetCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}

message StatefulSet {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional StatefulSetSpec spec = 2;
  optional StatefulSetStatus status = 3;
}
message StatefulSetSpec {
  optional int32 replicas = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2 [(ptr) = true];
  optional .k8s.io.api.core.v1.PodTemplateSpec template = 3;
  repeated .k8s.io.api.core.v1.PersistentVolumeClaim volumeClaimTemplates = 4;
  optional string serviceName = 5;
  optional string podManagementPolicy = 6;
  optional StatefulSetUpdateStrategy updateStrategy = 7;
  optional int32 revisionHistoryLimit = 8 [(ptr) = true];
  optional int32 minReadySeconds = 9;
  optional StatefulSetPersistentVolumeClaimRetentionPolicy persistentVolumeClaimRetentionPolicy = 10 [(ptr) = true];
  optional StatefulSetOrdinals ordinals = 11 [(ptr) = true];
}
message StatefulSetUpdateStrategy { optional string type = 1; optional RollingUpdateStatefulSetStrategy rollingUpdate = 2 [(ptr) = true]; }
message RollingUpdateStatefulSetStrategy {
  optional int32 partition = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString maxUnavailable = 2 [(ptr) = true];
}
message StatefulSetPersistentVolumeClaimRetentionPolicy { optional string whenDeleted = 1; optional string whenScaled = 2; }
message StatefulSetOrdinals { optional int32 start = 1; }
message StatefulSetStatus {
  optional int64 observedGeneration = 1;
  optional int32 replicas = 2 [(keep) = true];
  optional int32 readyReplicas = 3;
  optional int32 currentReplicas = 4;
  optional int32 updatedReplicas = 5;
  optional string currentRevision = 6;
  optional string updateRevision = 7;
  optional int32 collisionCount = 9 [(ptr) = true];
  repeated StatefulSetCondition conditions = 10 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  optional int32 availableReplicas = 11;
}
message StatefulSetCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}

message ControllerRevision {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional .k8s.io.apimachinery.pkg.runtime.RawExtension data = 2;
  optional int64 revision = 3 [(keep) = true];
}
`;

export const POLICY_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.policy.v1;
message PodDisruptionBudget {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PodDisruptionBudgetSpec spec = 2;
  optional PodDisruptionBudgetStatus status = 3;
}
message PodDisruptionBudgetSpec {
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString minAvailable = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString maxUnavailable = 3 [(ptr) = true];
  optional string unhealthyPodEvictionPolicy = 4 [(ptr) = true];
}
message PodDisruptionBudgetStatus {
  optional int64 observedGeneration = 1;
  map<string, .k8s.io.apimachinery.pkg.apis.meta.v1.Time> disruptedPods = 2;
  optional int32 disruptionsAllowed = 3 [(keep) = true];
  optional int32 currentHealthy = 4 [(keep) = true];
  optional int32 desiredHealthy = 5 [(keep) = true];
  optional int32 expectedPods = 6 [(keep) = true];
  repeated .k8s.io.apimachinery.pkg.apis.meta.v1.Condition conditions = 7 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message Eviction {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions deleteOptions = 2 [(ptr) = true];
}
`;

export const COORDINATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.coordination.v1;
message Lease {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional LeaseSpec spec = 2;
}
message LeaseSpec {
  optional string holderIdentity = 1 [(ptr) = true];
  optional int32 leaseDurationSeconds = 2 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime acquireTime = 3 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime renewTime = 4 [(ptr) = true];
  optional int32 leaseTransitions = 5 [(ptr) = true];
  optional string strategy = 6 [(ptr) = true];
  optional string preferredHolder = 7 [(ptr) = true];
}
`;

export const FLOWCONTROL_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.flowcontrol.v1;
message FlowSchema {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional FlowSchemaSpec spec = 2;
  optional FlowSchemaStatus status = 3;
}
message FlowSchemaSpec {
  optional PriorityLevelConfigurationReference priorityLevelConfiguration = 1;
  optional int32 matchingPrecedence = 2 [(keep) = true];
  optional FlowDistinguisherMethod distinguisherMethod = 3 [(ptr) = true];
  repeated PolicyRulesWithSubjects rules = 4 [(listType) = "atomic"];
}
message PriorityLevelConfigurationReference { optional string name = 1 [(keep) = true]; }
message FlowDistinguisherMethod { optional string type = 1 [(keep) = true]; }
message PolicyRulesWithSubjects {
  repeated Subject subjects = 1 [(keep) = true, (listType) = "atomic"];
  repeated ResourcePolicyRule resourceRules = 2 [(listType) = "atomic"];
  repeated NonResourcePolicyRule nonResourceRules = 3 [(listType) = "atomic"];
}
message Subject {
  optional string kind = 1 [(keep) = true];
  optional UserSubject user = 2 [(ptr) = true];
  optional GroupSubject group = 3 [(ptr) = true];
  optional ServiceAccountSubject serviceAccount = 4 [(ptr) = true];
}
message UserSubject { optional string name = 1 [(keep) = true]; }
message GroupSubject { optional string name = 1 [(keep) = true]; }
message ServiceAccountSubject {
  optional string namespace = 1 [(keep) = true];
  optional string name = 2 [(keep) = true];
}
message ResourcePolicyRule {
  repeated string verbs = 1 [(keep) = true, (listType) = "set"];
  repeated string apiGroups = 2 [(keep) = true, (listType) = "set"];
  repeated string resources = 3 [(keep) = true, (listType) = "set"];
  optional bool clusterScope = 4;
  repeated string namespaces = 5 [(keep) = true, (listType) = "set"];
}
message NonResourcePolicyRule {
  repeated string verbs = 1 [(keep) = true, (listType) = "set"];
  repeated string nonResourceURLs = 6 [(keep) = true, (listType) = "set"];
}
message FlowSchemaStatus {
  repeated FlowSchemaCondition conditions = 1 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message FlowSchemaCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}
message PriorityLevelConfiguration {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional PriorityLevelConfigurationSpec spec = 2;
  optional PriorityLevelConfigurationStatus status = 3;
}
message PriorityLevelConfigurationSpec {
  optional string type = 1 [(keep) = true];
  optional LimitedPriorityLevelConfiguration limited = 2 [(ptr) = true];
  optional ExemptPriorityLevelConfiguration exempt = 3 [(ptr) = true];
}
message LimitedPriorityLevelConfiguration {
  optional int32 nominalConcurrencyShares = 1 [(ptr) = true];
  optional LimitResponse limitResponse = 2;
  optional int32 lendablePercent = 3 [(ptr) = true];
  optional int32 borrowingLimitPercent = 4 [(ptr) = true];
}
message ExemptPriorityLevelConfiguration {
  optional int32 nominalConcurrencyShares = 1 [(ptr) = true];
  optional int32 lendablePercent = 2 [(ptr) = true];
}
message LimitResponse {
  optional string type = 1 [(keep) = true];
  optional QueuingConfiguration queuing = 2 [(ptr) = true];
}
message QueuingConfiguration {
  optional int32 queues = 1 [(keep) = true];
  optional int32 handSize = 2 [(keep) = true];
  optional int32 queueLengthLimit = 3 [(keep) = true];
}
message PriorityLevelConfigurationStatus {
  repeated PriorityLevelConfigurationCondition conditions = 1 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message PriorityLevelConfigurationCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}
`;

export const BATCH_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.batch.v1;
message Job {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional JobSpec spec = 2;
  optional JobStatus status = 3;
}
message JobSpec {
  optional int32 parallelism = 1 [(ptr) = true];
  optional int32 completions = 2 [(ptr) = true];
  optional int64 activeDeadlineSeconds = 3 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 4 [(ptr) = true];
  optional bool manualSelector = 5 [(ptr) = true];
  optional .k8s.io.api.core.v1.PodTemplateSpec template = 6;
  optional int32 backoffLimit = 7 [(ptr) = true];
  optional int32 ttlSecondsAfterFinished = 8 [(ptr) = true];
  optional string completionMode = 9 [(ptr) = true];
  optional bool suspend = 10 [(ptr) = true];
  optional PodFailurePolicy podFailurePolicy = 11 [(ptr) = true];
  optional int32 backoffLimitPerIndex = 12 [(ptr) = true];
  optional int32 maxFailedIndexes = 13 [(ptr) = true];
  optional string podReplacementPolicy = 14 [(ptr) = true];
  optional string managedBy = 15 [(ptr) = true];
  optional SuccessPolicy successPolicy = 16 [(ptr) = true];
}
message PodFailurePolicy { repeated PodFailurePolicyRule rules = 1; }
message PodFailurePolicyRule {
  optional string action = 1;
  optional PodFailurePolicyOnExitCodesRequirement onExitCodes = 2 [(ptr) = true];
  repeated PodFailurePolicyOnPodConditionsPattern onPodConditions = 3;
}
message PodFailurePolicyOnExitCodesRequirement {
  optional string containerName = 1 [(ptr) = true];
  optional string operator = 2;
  repeated int32 values = 3;
}
message PodFailurePolicyOnPodConditionsPattern { optional string type = 1; optional string status = 2; }
message SuccessPolicy { repeated SuccessPolicyRule rules = 1; }
message SuccessPolicyRule {
  optional string succeededIndexes = 1 [(ptr) = true];
  optional int32 succeededCount = 2 [(ptr) = true];
}
message JobStatus {
  repeated JobCondition conditions = 1 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time startTime = 2 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time completionTime = 3 [(ptr) = true];
  optional int32 active = 4;
  optional int32 succeeded = 5;
  optional int32 failed = 6;
  optional string completedIndexes = 7;
  optional UncountedTerminatedPods uncountedTerminatedPods = 8 [(ptr) = true];
  optional int32 ready = 9 [(ptr) = true];
  optional string failedIndexes = 10 [(ptr) = true];
  optional int32 terminating = 11 [(ptr) = true];
}
message JobCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastProbeTime = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message UncountedTerminatedPods { repeated string succeeded = 1; repeated string failed = 2; }
message JobTemplateSpec {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional JobSpec spec = 2;
}
message CronJob {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional CronJobSpec spec = 2;
  optional CronJobStatus status = 3;
}
message CronJobSpec {
  optional string schedule = 1;
  optional int64 startingDeadlineSeconds = 2 [(ptr) = true];
  optional string concurrencyPolicy = 3;
  optional bool suspend = 4 [(ptr) = true];
  optional JobTemplateSpec jobTemplate = 5;
  optional int32 successfulJobsHistoryLimit = 6 [(ptr) = true];
  optional int32 failedJobsHistoryLimit = 7 [(ptr) = true];
  optional string timeZone = 8 [(ptr) = true];
}
message CronJobStatus {
  repeated .k8s.io.api.core.v1.ObjectReference active = 1;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastScheduleTime = 4 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastSuccessfulTime = 5 [(ptr) = true];
}
`;

export const DISCOVERY_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.discovery.v1;
message EndpointSlice {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated Endpoint endpoints = 2;
  repeated EndpointPort ports = 3;
  optional string addressType = 4;
}
message Endpoint {
  repeated string addresses = 1;
  optional EndpointConditions conditions = 2;
  optional string hostname = 3 [(ptr) = true];
  optional .k8s.io.api.core.v1.ObjectReference targetRef = 4 [(ptr) = true];
  map<string, string> deprecatedTopology = 5;
  optional string nodeName = 6 [(ptr) = true];
  optional string zone = 7 [(ptr) = true];
  optional EndpointHints hints = 8 [(ptr) = true];
}
message EndpointConditions {
  optional bool ready = 1 [(ptr) = true];
  optional bool serving = 2 [(ptr) = true];
  optional bool terminating = 3 [(ptr) = true];
}
message EndpointHints { repeated ForZone forZones = 1; repeated ForNode forNodes = 2; }
message ForZone { optional string name = 1; }
message ForNode { optional string name = 1; }
message EndpointPort {
  optional string name = 1 [(ptr) = true];
  optional string protocol = 2 [(ptr) = true];
  optional int32 port = 3 [(ptr) = true];
  optional string appProtocol = 4 [(ptr) = true];
}
`;

export const RBAC_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.rbac.v1;
message PolicyRule {
  repeated string verbs = 1;
  repeated string apiGroups = 2;
  repeated string resources = 3;
  repeated string resourceNames = 4;
  repeated string nonResourceURLs = 5;
}
message AggregationRule {
  repeated .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector clusterRoleSelectors = 1;
}
message Role {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated PolicyRule rules = 2;
}
message ClusterRole {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated PolicyRule rules = 2;
  optional AggregationRule aggregationRule = 3 [(ptr) = true];
}
message Subject {
  optional string kind = 1;
  optional string apiGroup = 2 [(keep) = true];
  optional string name = 3;
  optional string namespace = 4;
}
message RoleRef {
  optional string apiGroup = 1;
  optional string kind = 2;
  optional string name = 3;
}
message RoleBinding {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated Subject subjects = 2;
  optional RoleRef roleRef = 3;
}
message ClusterRoleBinding {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated Subject subjects = 2;
  optional RoleRef roleRef = 3;
}
`;

export const AUTHORIZATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.authorization.v1;
message SelfSubjectAccessReview {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional SelfSubjectAccessReviewSpec spec = 2;
}
message SelfSubjectAccessReviewSpec {
  optional ResourceAttributes resourceAttributes = 1 [(ptr) = true];
  optional NonResourceAttributes nonResourceAttributes = 2 [(ptr) = true];
}
message ResourceAttributes {
  optional string namespace = 1;
  optional string verb = 2;
  optional string group = 3;
  optional string version = 4;
  optional string resource = 5;
  optional string subresource = 6;
  optional string name = 7;
}
message NonResourceAttributes {
  optional string path = 1;
  optional string verb = 2;
}
message SelfSubjectRulesReview {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional SelfSubjectRulesReviewSpec spec = 2;
}
message SelfSubjectRulesReviewSpec {
  optional string namespace = 1;
}
`;

export const AUTHENTICATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.authentication.v1;
message SelfSubjectReview {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
}
message TokenRequest {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional TokenRequestSpec spec = 2;
}
message TokenRequestSpec {
  repeated string audiences = 1;
  optional BoundObjectReference boundObjectRef = 3 [(ptr) = true];
  optional int64 expirationSeconds = 4 [(ptr) = true];
}
message BoundObjectReference {
  optional string kind = 1;
  optional string apiVersion = 2;
  optional string name = 3;
  optional string uid = 4;
}
`;

export const AUTHENTICATION_V1BETA1_PROTO = `
syntax = "proto2";
package k8s.io.api.authentication.v1beta1;
message SelfSubjectReview {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
}
`;

export const AUTOSCALING_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.autoscaling.v1;
message Scale {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional ScaleSpec spec = 2;
  optional ScaleStatus status = 3;
}
// replicas is a plain int32 with omitempty upstream, but a Scale write exists to set it, so a zero
// is kept rather than leaving consumers to infer "absent means 0".
message ScaleSpec { optional int32 replicas = 1 [(keep) = true]; }
message ScaleStatus { optional int32 replicas = 1 [(keep) = true]; optional string selector = 2; }
// HorizontalPodAutoscaler at v1: served beside v2 (its storage version) and converted to and from it;
// what v1 cannot say travels in the autoscaling.alpha.kubernetes.io/* annotations.
message HorizontalPodAutoscaler {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional HorizontalPodAutoscalerSpec spec = 2;
  optional HorizontalPodAutoscalerStatus status = 3;
}
message CrossVersionObjectReference { option (structType) = "atomic";
  optional string kind = 1;
  optional string name = 2;
  optional string apiVersion = 3;
}
message HorizontalPodAutoscalerSpec {
  optional CrossVersionObjectReference scaleTargetRef = 1;
  optional int32 minReplicas = 2 [(ptr) = true];
  optional int32 maxReplicas = 3 [(keep) = true];
  optional int32 targetCPUUtilizationPercentage = 4 [(ptr) = true];
}
message HorizontalPodAutoscalerStatus {
  optional int64 observedGeneration = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastScaleTime = 2 [(ptr) = true];
  optional int32 currentReplicas = 3 [(keep) = true];
  optional int32 desiredReplicas = 4 [(keep) = true];
  optional int32 currentCPUUtilizationPercentage = 5 [(ptr) = true];
}
`;

export const AUTOSCALING_V2_PROTO = `
syntax = "proto2";
package k8s.io.api.autoscaling.v2;
message HorizontalPodAutoscaler {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional HorizontalPodAutoscalerSpec spec = 2;
  optional HorizontalPodAutoscalerStatus status = 3;
}
message CrossVersionObjectReference {
  optional string kind = 1;
  optional string name = 2;
  optional string apiVersion = 3;
}
message HorizontalPodAutoscalerSpec {
  optional CrossVersionObjectReference scaleTargetRef = 1;
  optional int32 minReplicas = 2 [(ptr) = true];
  optional int32 maxReplicas = 3 [(keep) = true];
  repeated MetricSpec metrics = 4 [(listType) = "atomic"];
  optional HorizontalPodAutoscalerBehavior behavior = 5 [(ptr) = true];
}
message HorizontalPodAutoscalerBehavior {
  optional HPAScalingRules scaleUp = 1 [(ptr) = true];
  optional HPAScalingRules scaleDown = 2 [(ptr) = true];
}
message HPAScalingRules {
  optional int32 stabilizationWindowSeconds = 3 [(ptr) = true];
  optional string selectPolicy = 1 [(ptr) = true];
  repeated HPAScalingPolicy policies = 2 [(listType) = "atomic"];
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity tolerance = 4 [(ptr) = true];
}
message HPAScalingPolicy {
  optional string type = 1;
  optional int32 value = 2 [(keep) = true];
  optional int32 periodSeconds = 3 [(keep) = true];
}
message MetricSpec {
  optional string type = 1;
  optional ObjectMetricSource object = 2 [(ptr) = true];
  optional PodsMetricSource pods = 3 [(ptr) = true];
  optional ResourceMetricSource resource = 4 [(ptr) = true];
  optional ContainerResourceMetricSource containerResource = 7 [(ptr) = true];
  optional ExternalMetricSource external = 5 [(ptr) = true];
}
message MetricIdentifier {
  optional string name = 1;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector selector = 2 [(ptr) = true];
}
message MetricTarget {
  optional string type = 1;
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity value = 2 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity averageValue = 3 [(ptr) = true];
  optional int32 averageUtilization = 4 [(ptr) = true];
}
message MetricValueStatus {
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity value = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.api.resource.Quantity averageValue = 2 [(ptr) = true];
  optional int32 averageUtilization = 3 [(ptr) = true];
}
message ObjectMetricSource {
  optional CrossVersionObjectReference describedObject = 1;
  optional MetricTarget target = 2;
  optional MetricIdentifier metric = 3;
}
message PodsMetricSource {
  optional MetricIdentifier metric = 1;
  optional MetricTarget target = 2;
}
message ResourceMetricSource {
  optional string name = 1;
  optional MetricTarget target = 2;
}
message ContainerResourceMetricSource {
  optional string name = 1;
  optional MetricTarget target = 2;
  optional string container = 3;
}
message ExternalMetricSource {
  optional MetricIdentifier metric = 1;
  optional MetricTarget target = 2;
}
message HorizontalPodAutoscalerStatus {
  optional int64 observedGeneration = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastScaleTime = 2 [(ptr) = true];
  optional int32 currentReplicas = 3;
  optional int32 desiredReplicas = 4 [(keep) = true];
  repeated MetricStatus currentMetrics = 5 [(listType) = "atomic"];
  repeated HorizontalPodAutoscalerCondition conditions = 6 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message HorizontalPodAutoscalerCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}
message MetricStatus {
  optional string type = 1;
  optional ObjectMetricStatus object = 2 [(ptr) = true];
  optional PodsMetricStatus pods = 3 [(ptr) = true];
  optional ResourceMetricStatus resource = 4 [(ptr) = true];
  optional ContainerResourceMetricStatus containerResource = 7 [(ptr) = true];
  optional ExternalMetricStatus external = 5 [(ptr) = true];
}
message ObjectMetricStatus {
  optional MetricIdentifier metric = 1;
  optional MetricValueStatus current = 2;
  optional CrossVersionObjectReference describedObject = 3;
}
message PodsMetricStatus {
  optional MetricIdentifier metric = 1;
  optional MetricValueStatus current = 2;
}
message ResourceMetricStatus {
  optional string name = 1;
  optional MetricValueStatus current = 2;
}
message ContainerResourceMetricStatus {
  optional string name = 1;
  optional MetricValueStatus current = 2;
  optional string container = 3;
}
message ExternalMetricStatus {
  optional MetricIdentifier metric = 1;
  optional MetricValueStatus current = 2;
}
`;

// apiextensions.k8s.io/v1. JSONSchemaProps is carried whole (its JSON is the schema, with keys such
// as x-kubernetes-preserve-unknown-fields that no proto field name can spell): validated by
// src/apiextensions, not field by field here.
export const APIEXTENSIONS_V1_PROTO = `
syntax = "proto2";
package k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1;
message CustomResourceDefinition {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional CustomResourceDefinitionSpec spec = 2;
  optional CustomResourceDefinitionStatus status = 3;
}
message CustomResourceDefinitionSpec {
  optional string group = 1;
  optional CustomResourceDefinitionNames names = 3;
  optional string scope = 4;
  repeated CustomResourceDefinitionVersion versions = 7 [(listType) = "atomic"];
  optional CustomResourceConversion conversion = 9 [(ptr) = true];
  optional bool preserveUnknownFields = 10;
}
message CustomResourceDefinitionNames {
  optional string plural = 1;
  optional string singular = 2;
  repeated string shortNames = 3 [(listType) = "atomic"];
  optional string kind = 4;
  optional string listKind = 5;
  repeated string categories = 6 [(listType) = "atomic"];
}
message CustomResourceDefinitionVersion {
  optional string name = 1;
  optional bool served = 2 [(keep) = true];
  optional bool storage = 3 [(keep) = true];
  optional CustomResourceValidation schema = 4 [(ptr) = true];
  optional CustomResourceSubresources subresources = 5 [(ptr) = true];
  repeated CustomResourceColumnDefinition additionalPrinterColumns = 6 [(listType) = "atomic"];
  optional bool deprecated = 7;
  optional string deprecationWarning = 8 [(ptr) = true];
  repeated SelectableField selectableFields = 9 [(listType) = "atomic"];
}
message CustomResourceValidation { optional JSONSchemaProps openAPIV3Schema = 1 [(ptr) = true]; }
message JSONSchemaProps {}
message CustomResourceSubresources {
  optional CustomResourceSubresourceStatus status = 1 [(ptr) = true];
  optional CustomResourceSubresourceScale scale = 2 [(ptr) = true];
}
message CustomResourceSubresourceStatus {}
message CustomResourceSubresourceScale {
  optional string specReplicasPath = 1;
  optional string statusReplicasPath = 2;
  optional string labelSelectorPath = 3 [(ptr) = true];
}
message CustomResourceColumnDefinition {
  optional string name = 1;
  optional string type = 2;
  optional string format = 3;
  optional string description = 4;
  optional int32 priority = 5;
  optional string jsonPath = 6;
}
message SelectableField { optional string jsonPath = 1; }
message CustomResourceConversion {
  optional string strategy = 1;
  optional WebhookConversion webhook = 2 [(ptr) = true];
}
message WebhookConversion {
  optional WebhookClientConfig clientConfig = 2 [(ptr) = true];
  repeated string conversionReviewVersions = 3 [(listType) = "atomic"];
}
message WebhookClientConfig {
  optional ServiceReference service = 1 [(ptr) = true];
  optional bytes caBundle = 2;
  optional string url = 3 [(ptr) = true];
}
message ServiceReference {
  optional string namespace = 1;
  optional string name = 2;
  optional string path = 3 [(ptr) = true];
  optional int32 port = 4 [(ptr) = true];
}
message CustomResourceDefinitionStatus {
  repeated CustomResourceDefinitionCondition conditions = 1 [(listType) = "map", (listMapKeys) = "type"];
  optional CustomResourceDefinitionNames acceptedNames = 2;
  repeated string storedVersions = 3 [(listType) = "atomic"];
}
message CustomResourceDefinitionCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
  optional int64 observedGeneration = 6;
}
`;

export const NETWORKING_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.networking.v1;
message NetworkPolicy {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional NetworkPolicySpec spec = 2;
}
message NetworkPolicySpec {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector podSelector = 1;
  repeated NetworkPolicyIngressRule ingress = 2 [(listType) = "atomic"];
  repeated NetworkPolicyEgressRule egress = 3 [(listType) = "atomic"];
  repeated string policyTypes = 4 [(listType) = "atomic"];
}
message NetworkPolicyIngressRule {
  repeated NetworkPolicyPort ports = 1 [(listType) = "atomic"];
  repeated NetworkPolicyPeer from = 2 [(listType) = "atomic"];
}
message NetworkPolicyEgressRule {
  repeated NetworkPolicyPort ports = 1 [(listType) = "atomic"];
  repeated NetworkPolicyPeer to = 2 [(listType) = "atomic"];
}
message NetworkPolicyPort {
  optional string protocol = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.util.intstr.IntOrString port = 2 [(ptr) = true];
  optional int32 endPort = 3 [(ptr) = true];
}
message NetworkPolicyPeer {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector podSelector = 1 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector namespaceSelector = 2 [(ptr) = true];
  optional IPBlock ipBlock = 3 [(ptr) = true];
}
message IPBlock { optional string cidr = 1 [(keep) = true]; repeated string except = 2 [(listType) = "atomic"]; }

message Ingress {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional IngressSpec spec = 2;
  optional IngressStatus status = 3;
}
message IngressSpec {
  optional IngressBackend defaultBackend = 1 [(ptr) = true];
  repeated IngressTLS tls = 2 [(listType) = "atomic"];
  repeated IngressRule rules = 3 [(listType) = "atomic"];
  optional string ingressClassName = 4 [(ptr) = true];
}
message IngressBackend {
  optional .k8s.io.api.core.v1.TypedLocalObjectReference resource = 3 [(ptr) = true];
  optional IngressServiceBackend service = 4 [(ptr) = true];
}
message IngressServiceBackend { optional string name = 1; optional ServiceBackendPort port = 2; }
message ServiceBackendPort { option (structType) = "atomic"; optional string name = 1; optional int32 number = 2; }
message IngressTLS { repeated string hosts = 1 [(listType) = "atomic"]; optional string secretName = 2; }
message IngressRule {
  optional string host = 1;
  optional IngressRuleValue ingressRuleValue = 2 [(inline) = true];
}
message IngressRuleValue { optional HTTPIngressRuleValue http = 1 [(ptr) = true]; }
message HTTPIngressRuleValue { repeated HTTPIngressPath paths = 1 [(listType) = "atomic"]; }
message HTTPIngressPath {
  optional string path = 1;
  optional IngressBackend backend = 2;
  optional string pathType = 3 [(ptr) = true];
}
message IngressStatus { optional IngressLoadBalancerStatus loadBalancer = 1; }
message IngressLoadBalancerStatus { repeated IngressLoadBalancerIngress ingress = 1 [(listType) = "atomic"]; }
message IngressLoadBalancerIngress {
  optional string ip = 1;
  optional string hostname = 2;
  repeated IngressPortStatus ports = 4 [(listType) = "atomic"];
}
message IngressPortStatus {
  optional int32 port = 1 [(keep) = true];
  optional string protocol = 2 [(keep) = true];
  optional string error = 3 [(ptr) = true];
}

message IngressClass {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional IngressClassSpec spec = 2;
}
message IngressClassSpec {
  optional string controller = 1;
  optional IngressClassParametersReference parameters = 2 [(ptr) = true];
}
message IngressClassParametersReference {
  optional string apiGroup = 1 [(ptr) = true];
  optional string kind = 2;
  optional string name = 3;
  optional string scope = 4 [(ptr) = true];
  optional string namespace = 5 [(ptr) = true];
}
`;

export const STORAGE_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.storage.v1;
message StorageClass {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional string provisioner = 2 [(keep) = true];
  map<string, string> parameters = 3;
  optional string reclaimPolicy = 4 [(ptr) = true];
  repeated string mountOptions = 5 [(listType) = "atomic"];
  optional bool allowVolumeExpansion = 6 [(ptr) = true];
  optional string volumeBindingMode = 7 [(ptr) = true];
  repeated .k8s.io.api.core.v1.TopologySelectorTerm allowedTopologies = 8 [(listType) = "atomic"];
}

message CSIDriver {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional CSIDriverSpec spec = 2;
}
message CSIDriverSpec {
  optional bool attachRequired = 1 [(ptr) = true];
  optional bool podInfoOnMount = 2 [(ptr) = true];
  repeated string volumeLifecycleModes = 3 [(listType) = "set"];
  optional bool storageCapacity = 4 [(ptr) = true];
  optional string fsGroupPolicy = 5 [(ptr) = true];
  repeated TokenRequest tokenRequests = 6 [(listType) = "atomic"];
  optional bool requiresRepublish = 7 [(ptr) = true];
  optional bool seLinuxMount = 8 [(ptr) = true];
  optional int64 nodeAllocatableUpdatePeriodSeconds = 9 [(ptr) = true];
  optional bool serviceAccountTokenInSecrets = 10 [(ptr) = true];
  optional bool preventPodSchedulingIfMissing = 11 [(ptr) = true];
}
message TokenRequest { optional string audience = 1 [(keep) = true]; optional int64 expirationSeconds = 2 [(ptr) = true]; }

message CSINode {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional CSINodeSpec spec = 2;
  optional CSINodeStatus status = 3;
}
message CSINodeSpec {
  repeated CSINodeDriver drivers = 1 [(keep) = true, (patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
}
message CSINodeDriver {
  optional string name = 1;
  optional string nodeID = 2 [(keep) = true];
  repeated string topologyKeys = 3 [(listType) = "atomic"];
  optional VolumeNodeResources allocatable = 4 [(ptr) = true];
}
message VolumeNodeResources { optional int32 count = 1 [(ptr) = true]; }
message CSINodeStatus {
  repeated StorageHealth storageHealth = 1 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
}
message StorageHealth { optional string name = 1; repeated StorageHealthCondition healthConditions = 2 [(listType) = "atomic"]; }
message StorageHealthCondition {
  optional string status = 1;
  optional string reason = 2;
  optional string message = 3;
  optional string accessMode = 4 [(ptr) = true];
  optional string volumeMode = 5 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 6;
}

message VolumeAttachment {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional VolumeAttachmentSpec spec = 2;
  optional VolumeAttachmentStatus status = 3;
}
message VolumeAttachmentSpec {
  optional string attacher = 1;
  optional VolumeAttachmentSource source = 2;
  optional string nodeName = 3;
}
message VolumeAttachmentSource {
  optional string persistentVolumeName = 1 [(ptr) = true];
  optional .k8s.io.api.core.v1.PersistentVolumeSpec inlineVolumeSpec = 2 [(ptr) = true];
}
message VolumeAttachmentStatus {
  optional bool attached = 1 [(keep) = true];
  map<string, string> attachmentMetadata = 2;
  optional VolumeError attachError = 3 [(ptr) = true];
  optional VolumeError detachError = 4 [(ptr) = true];
}
message VolumeError {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time time = 1;
  optional string message = 2;
  optional int32 errorCode = 3 [(ptr) = true];
}
`;

// scheduling.k8s.io/v1.
export const SCHEDULING_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.scheduling.v1;
message PriorityClass {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional int32 value = 2 [(keep) = true];
  optional bool globalDefault = 3;
  optional string description = 4;
  optional string preemptionPolicy = 5 [(ptr) = true];
}
`;

// certificates.k8s.io/v1. ExtraValue's JSON is a plain list of strings (see ./root.ts).
export const CERTIFICATES_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.certificates.v1;
message CertificateSigningRequest {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional CertificateSigningRequestSpec spec = 2;
  optional CertificateSigningRequestStatus status = 3;
}
message CertificateSigningRequestSpec {
  optional bytes request = 1;
  optional string signerName = 7;
  optional int32 expirationSeconds = 8 [(ptr) = true];
  repeated string usages = 5 [(listType) = "atomic"];
  optional string username = 2;
  optional string uid = 3;
  repeated string groups = 4 [(listType) = "atomic"];
  map<string, ExtraValue> extra = 6;
}
message ExtraValue { repeated string items = 1; }
message CertificateSigningRequestStatus {
  repeated CertificateSigningRequestCondition conditions = 1 [(listType) = "map", (listMapKeys) = "type"];
  optional bytes certificate = 2;
}
message CertificateSigningRequestCondition {
  optional string type = 1;
  optional string status = 6;
  optional string reason = 2;
  optional string message = 3;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastUpdateTime = 4;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 5;
}
`;

// apiregistration.k8s.io/v1 (kube-aggregator).
export const APIREGISTRATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.kube_aggregator.pkg.apis.apiregistration.v1;
message APIService {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional APIServiceSpec spec = 2;
  optional APIServiceStatus status = 3;
}
message APIServiceSpec {
  optional ServiceReference service = 1 [(ptr) = true];
  optional string group = 2;
  optional string version = 3;
  optional bool insecureSkipTLSVerify = 4;
  optional bytes caBundle = 5;
  optional int32 groupPriorityMinimum = 7 [(keep) = true];
  optional int32 versionPriority = 8 [(keep) = true];
}
message ServiceReference {
  optional string namespace = 1;
  optional string name = 2;
  optional int32 port = 3 [(ptr) = true];
}
message APIServiceStatus {
  repeated APIServiceCondition conditions = 1 [(patchStrategy) = "merge", (patchMergeKey) = "type", (listType) = "map", (listMapKeys) = "type"];
}
message APIServiceCondition {
  optional string type = 1;
  optional string status = 2;
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.Time lastTransitionTime = 3;
  optional string reason = 4;
  optional string message = 5;
}
`;

// admissionregistration.k8s.io/v1 (the webhook configurations).
export const ADMISSIONREGISTRATION_V1_PROTO = `
syntax = "proto2";
package k8s.io.api.admissionregistration.v1;
message MatchCondition { optional string name = 1; optional string expression = 2; }
message Rule {
  repeated string apiGroups = 1 [(listType) = "atomic"];
  repeated string apiVersions = 2 [(listType) = "atomic"];
  repeated string resources = 3 [(listType) = "atomic"];
  optional string scope = 4 [(ptr) = true];
}
message RuleWithOperations {
  repeated string operations = 1 [(listType) = "atomic"];
  optional Rule rule = 2 [(inline) = true];
}
message ServiceReference {
  optional string namespace = 1;
  optional string name = 2;
  optional string path = 3 [(ptr) = true];
  optional int32 port = 4 [(ptr) = true];
}
message WebhookClientConfig {
  optional ServiceReference service = 1 [(ptr) = true];
  optional bytes caBundle = 2;
  optional string url = 3 [(ptr) = true];
}
message MutatingWebhook {
  optional string name = 1;
  optional WebhookClientConfig clientConfig = 2;
  repeated RuleWithOperations rules = 3 [(listType) = "atomic"];
  optional string failurePolicy = 4 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector namespaceSelector = 5 [(ptr) = true];
  optional string sideEffects = 6 [(ptr) = true];
  optional int32 timeoutSeconds = 7 [(ptr) = true];
  repeated string admissionReviewVersions = 8 [(listType) = "atomic"];
  optional string matchPolicy = 9 [(ptr) = true];
  optional string reinvocationPolicy = 10 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector objectSelector = 11 [(ptr) = true];
  repeated MatchCondition matchConditions = 12 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
}
message MutatingWebhookConfiguration {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated MutatingWebhook webhooks = 2 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
}
message ValidatingWebhook {
  optional string name = 1;
  optional WebhookClientConfig clientConfig = 2;
  repeated RuleWithOperations rules = 3 [(listType) = "atomic"];
  optional string failurePolicy = 4 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector namespaceSelector = 5 [(ptr) = true];
  optional string sideEffects = 6 [(ptr) = true];
  optional int32 timeoutSeconds = 7 [(ptr) = true];
  repeated string admissionReviewVersions = 8 [(listType) = "atomic"];
  optional string matchPolicy = 9 [(ptr) = true];
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector objectSelector = 10 [(ptr) = true];
  repeated MatchCondition matchConditions = 11 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
}
message ValidatingWebhookConfiguration {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated ValidatingWebhook webhooks = 2 [(patchStrategy) = "merge", (patchMergeKey) = "name", (listType) = "map", (listMapKeys) = "name"];
}
`;

/** Every definition above, dependencies first; parse them into one protobufjs Root. */
export const PROTO_SOURCES: readonly string[] = [
  RUNTIME_PROTO,
  RESOURCE_PROTO,
  INTSTR_PROTO,
  META_V1_PROTO,
  CORE_V1_PROTO,
  APPS_V1_PROTO,
  POLICY_V1_PROTO,
  COORDINATION_V1_PROTO,
  FLOWCONTROL_V1_PROTO,
  AUTOSCALING_V1_PROTO,
  AUTOSCALING_V2_PROTO,
  BATCH_V1_PROTO,
  DISCOVERY_V1_PROTO,
  RBAC_V1_PROTO,
  AUTHORIZATION_V1_PROTO,
  AUTHENTICATION_V1_PROTO,
  AUTHENTICATION_V1BETA1_PROTO,
  NETWORKING_V1_PROTO,
  STORAGE_V1_PROTO,
  APIEXTENSIONS_V1_PROTO,
  SCHEDULING_V1_PROTO,
  CERTIFICATES_V1_PROTO,
  APIREGISTRATION_V1_PROTO,
  ADMISSIONREGISTRATION_V1_PROTO,
];

/**
 * Kinds a protobuf body may carry, by apiVersion, and the package holding their messages.
 * DeleteOptions is accepted under any apiVersion, as upstream registers it in every group.
 */
export const SUPPORTED_KINDS: Readonly<Record<string, { pkg: string; kinds: readonly string[] }>> = {
  v1: {
    pkg: 'k8s.io.api.core.v1',
    kinds: [
      'Namespace', 'Node', 'Pod', 'Event', 'Service', 'Endpoints', 'ConfigMap', 'Secret', 'ServiceAccount',
      'Binding', 'PersistentVolume', 'PersistentVolumeClaim', 'ResourceQuota', 'LimitRange', 'ReplicationController', 'PodTemplate',
    ],
  },
  'apps/v1': { pkg: 'k8s.io.api.apps.v1', kinds: ['Deployment', 'ReplicaSet', 'DaemonSet', 'StatefulSet', 'ControllerRevision'] },
  'policy/v1': { pkg: 'k8s.io.api.policy.v1', kinds: ['PodDisruptionBudget', 'Eviction'] },
  'coordination.k8s.io/v1': { pkg: 'k8s.io.api.coordination.v1', kinds: ['Lease'] },
  'flowcontrol.apiserver.k8s.io/v1': { pkg: 'k8s.io.api.flowcontrol.v1', kinds: ['FlowSchema', 'PriorityLevelConfiguration'] },
  'autoscaling/v1': { pkg: 'k8s.io.api.autoscaling.v1', kinds: ['Scale', 'HorizontalPodAutoscaler'] },
  'autoscaling/v2': { pkg: 'k8s.io.api.autoscaling.v2', kinds: ['HorizontalPodAutoscaler'] },
  'batch/v1': { pkg: 'k8s.io.api.batch.v1', kinds: ['Job', 'CronJob'] },
  'discovery.k8s.io/v1': { pkg: 'k8s.io.api.discovery.v1', kinds: ['EndpointSlice'] },
  'rbac.authorization.k8s.io/v1': { pkg: 'k8s.io.api.rbac.v1', kinds: ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'] },
  'authorization.k8s.io/v1': { pkg: 'k8s.io.api.authorization.v1', kinds: ['SelfSubjectAccessReview', 'SelfSubjectRulesReview'] },
  'authentication.k8s.io/v1': { pkg: 'k8s.io.api.authentication.v1', kinds: ['SelfSubjectReview', 'TokenRequest'] },
  'authentication.k8s.io/v1beta1': { pkg: 'k8s.io.api.authentication.v1beta1', kinds: ['SelfSubjectReview'] },
  'networking.k8s.io/v1': { pkg: 'k8s.io.api.networking.v1', kinds: ['NetworkPolicy', 'Ingress', 'IngressClass'] },
  'storage.k8s.io/v1': { pkg: 'k8s.io.api.storage.v1', kinds: ['StorageClass', 'CSIDriver', 'CSINode', 'VolumeAttachment'] },
  'apiextensions.k8s.io/v1': { pkg: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1', kinds: ['CustomResourceDefinition'] },
  'scheduling.k8s.io/v1': { pkg: 'k8s.io.api.scheduling.v1', kinds: ['PriorityClass'] },
  'certificates.k8s.io/v1': { pkg: 'k8s.io.api.certificates.v1', kinds: ['CertificateSigningRequest'] },
  'apiregistration.k8s.io/v1': { pkg: 'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1', kinds: ['APIService'] },
  'admissionregistration.k8s.io/v1': { pkg: 'k8s.io.api.admissionregistration.v1', kinds: ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'] },
};

export const META_V1_PACKAGE = 'k8s.io.apimachinery.pkg.apis.meta.v1';
