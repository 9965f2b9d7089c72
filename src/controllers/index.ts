// Every controller `skiff server` runs (while it leads), in start order.
import type { Controller } from './manager.js';
import { NamespaceController } from './namespace.js';

export function allControllers(): Controller[] {
  return [new NamespaceController()];
}
