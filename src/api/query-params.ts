// Query parameters as apimachinery's parameter codec reads them, for every HTTP server in skiff
// (the API server and the agent's kubelet endpoint): clients in the field send `watch=True`
// (Python), `watch=1` or a bare `watch`, and each must mean what it means to kube-apiserver.

/**
 * A boolean parameter: false only when absent, `0`, or `false` in any case; anything else —
 * `true`, `True`, `1`, even an empty value — is true (Convert_Slice_string_To_bool).
 */
export function queryBool(q: URLSearchParams, name: string): boolean {
  return optionalQueryBool(q, name) ?? false;
}

/** The same for an optional (*bool) parameter: undefined when absent. */
export function optionalQueryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}
