// This machine's architecture as Go (and so Kubernetes and OCI) spells it: a Node's
// kubernetes.io/arch label and an image's platform must match it.
import { arch } from 'node:os';

const GO_ARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

export function goArch(): string {
  return GO_ARCH[arch()] ?? arch();
}
