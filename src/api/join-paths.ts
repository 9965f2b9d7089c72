// The two non-resource paths of joining a node, shared by the API server that serves them and
// the agent that calls them (which must not load the API server's code to know them).
export const JOIN_PATH = '/skiff/v1/join';
export const CA_PATH = '/skiff/v1/ca';
