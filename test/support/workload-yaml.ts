// Workload manifests written in a test, as YAML: the head every Deployment or StatefulSet of the
// workload-model tests shares (name, replicas, the app label its selector and pods carry), up to
// its pod template's `spec:`, which the test writes after it.
/** `kind` named `name` with `replicas` pods labelled app=<name>, up to and with `    spec:`. */
export function workloadHead(kind: string, name: string, replicas: number | string): string {
  return `
apiVersion: apps/v1
kind: ${kind}
metadata: { name: ${name} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:`;
}
