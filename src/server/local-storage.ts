// The local-path StorageClass, as k3s's local-storage manifest ships it: made the default when a
// server starts unless a class of that name exists (a user's edits, or a deletion followed by a
// class of their own under that name, are kept; a deleted one comes back at the next start, as
// k3s's manifests do).
import { isStatusError } from '../api/errors.js';
import { LOCAL_PATH_CLASS, localPathStorageClass } from '../api/kinds/volume-provisioning.js';
import type { ApiClient } from '../client/rest.js';
import type { Logger } from '../util/log.js';
import { errorText } from '../util/error-text.js';

const CLASSES = '/apis/storage.k8s.io/v1/storageclasses';

export async function ensureLocalPathStorageClass(client: Pick<ApiClient, 'get' | 'create'>, log: Logger): Promise<void> {
  try {
    await client.get(`${CLASSES}/${LOCAL_PATH_CLASS}`);
    return;
  } catch (e) {
    if (!isStatusError(e, 'NotFound')) {
      log.warn({ err: errorText(e) }, 'could not read the local-path StorageClass');
      return;
    }
  }
  try {
    await client.create(CLASSES, localPathStorageClass());
    log.info({ storageClass: LOCAL_PATH_CLASS }, 'default StorageClass created');
  } catch (e) {
    // Another member may have made it first.
    if (!isStatusError(e, 'AlreadyExists')) log.warn({ err: errorText(e) }, 'could not create the local-path StorageClass');
  }
}
