// The one line `skiff up` prints about how its nodes run pods, so that a newcomer learns at once
// whether real images are within reach. The default stays the process runtime even where
// containerd could run: a containerd node pulls every image from its registry, and the tour and a
// machine without a network would stop at the first `kubectl create deployment`.

export interface RuntimeChoiceFacts {
  runtime: string;
  /** The user named the runtime (`--runtime`), rather than taking the default. */
  explicit: boolean;
  /** What this machine lacks for the containerd runtime, root included (containerdPrerequisites()). */
  missingForContainerd: readonly string[];
}

export function runtimeChoiceLine(f: RuntimeChoiceFacts): string {
  const what = f.runtime === 'containerd' ? 'real OCI containers through containerd' : f.runtime === 'simulated' ? 'nothing: pods are simulated' : 'host processes, their images unused';
  const head = `nodes run pods as ${what} (--runtime ${f.runtime}${f.explicit ? '' : ', the default'})`;
  if (f.explicit || f.runtime !== 'process') return head;
  if (f.missingForContainerd.length === 0) return `${head}; real images: --runtime containerd (containerd, runc and the CNI plugins are here)`;
  return `${head}; real images need --runtime containerd, which needs ${f.missingForContainerd.join(', ')}`;
}
