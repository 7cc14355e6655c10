// The labels kind puts on its node containers (a module of their own: the docker fence driver
// reads them without loading the node handling and its container engine client).

/** On every container of a cluster: its value is the cluster name. */
export const KIND_CLUSTER_LABEL = "io.x-k8s.kind.cluster";
/** A node container's role: control-plane or worker. */
export const KIND_ROLE_LABEL = "io.x-k8s.kind.role";
