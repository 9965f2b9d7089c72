// Writing a one-layer OCI image archive (an OCI image layout in a tar file) from a directory, for
// machines without a registry: `skiff up --runtime containerd` makes its pause image this way and
// tests make their own small images from Debian's busybox-static. The layer is packed by the
// system's tar (GNU tar, with ownership reset so the image does not carry the builder's uid).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { goArch } from '../util/go-arch.js';

export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
  User?: string;
}

export interface OciArchiveInput {
  /** The full reference the image is known by once imported, e.g. skiff.local/busybox:1. */
  name: string;
  /** The image's root filesystem. */
  rootfs: string;
  config: ImageConfig;
  /** The archive to write. */
  out: string;
}

function sha256(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

/** Writes the archive; answers the manifest digest. */
export function writeOciArchive(i: OciArchiveInput): string {
  const work = mkdtempSync(join(tmpdir(), 'skiff-oci-'));
  try {
    const blobs = join(work, 'layout', 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true });
    const layerTar = join(work, 'layer.tar');
    // Sorted names and a fixed mtime: the same tree always gives the same digest.
    execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', i.rootfs, '-cf', layerTar, '.']);
    const tarBytes = readFileSync(layerTar);
    const diffId = sha256(tarBytes);
    const layer = gzipSync(tarBytes, { level: 6 });
    const layerDigest = sha256(layer);
    writeFileSync(join(blobs, layerDigest), layer);
    const config = JSON.stringify({
      architecture: goArch(),
      os: 'linux',
      config: { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], ...i.config },
      rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] },
      history: [{ created_by: 'skiff oci-archive' }],
    });
    const configDigest = sha256(config);
    writeFileSync(join(blobs, configDigest), config);
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: `sha256:${configDigest}`, size: Buffer.byteLength(config) },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `sha256:${layerDigest}`, size: layer.length }],
    });
    const manifestDigest = sha256(manifest);
    writeFileSync(join(blobs, manifestDigest), manifest);
    const tag = i.name.slice(i.name.lastIndexOf(':') + 1);
    writeFileSync(
      join(work, 'layout', 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            digest: `sha256:${manifestDigest}`,
            size: Buffer.byteLength(manifest),
            annotations: { 'io.containerd.image.name': i.name, 'org.opencontainers.image.ref.name': tag },
          },
        ],
      }),
    );
    writeFileSync(join(work, 'layout', 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    execFileSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', join(work, 'layout'), '-cf', i.out, '.']);
    return `sha256:${manifestDigest}`;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Debian's busybox-static: one static binary that is a whole userland, enough for small images. */
export const BUSYBOX_STATIC = '/bin/busybox';

/** Whether this machine can build busybox images (a statically linked /bin/busybox). */
export function haveStaticBusybox(): boolean {
  try {
    execFileSync(BUSYBOX_STATIC, ['true'], { stdio: 'ignore', env: {} });
    const elf = readFileSync(BUSYBOX_STATIC);
    // PT_INTERP names a dynamic loader: a dynamically linked busybox would not run in an empty image.
    return !elf.includes(Buffer.from('/lib64/ld-linux')) && !elf.includes(Buffer.from('/lib/ld-linux'));
  } catch {
    return false;
  }
}

/** A root filesystem of busybox with every applet linked in /bin, and the few directories a container expects. */
export function busyboxRootfs(dir: string): void {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  for (const d of ['etc', 'tmp', 'proc', 'sys', 'dev', 'root', 'var/run']) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, 'bin', 'busybox'), readFileSync(BUSYBOX_STATIC), { mode: 0o755 });
  const applets = execFileSync(BUSYBOX_STATIC, ['--list']).toString().split('\n').filter((a) => a && a !== 'busybox');
  for (const a of applets) symlinkSync('busybox', join(dir, 'bin', a));
  writeFileSync(join(dir, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
  writeFileSync(join(dir, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
}

/** A busybox image: its archive written to out, named name; answers the manifest digest. */
export function writeBusyboxImage(name: string, out: string, config: ImageConfig): string {
  const root = mkdtempSync(join(tmpdir(), 'skiff-rootfs-'));
  try {
    busyboxRootfs(root);
    return writeOciArchive({ name, rootfs: root, config, out });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
