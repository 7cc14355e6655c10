// The docker fence driver's power-loss notices (lib/cluster/kind/fence-driver.ts): which engine
// event lines are a container's death, and which fence targets such a death names. The real
// engine's stream: test/integration/docker-driver.test.ts.
import { expect } from "chai";
import { diedContainer, namesContainer } from "../../lib/cluster/kind/fence-driver.js";

const event = (action: string, attributes: Record<string, string>) =>
  JSON.stringify({ Type: "container", Action: action, Actor: { ID: "abc", Attributes: attributes } });

describe("docker fence driver: power-loss notices", function () {
  it("reads a die event's container name and kind cluster; anything else is no death", function () {
    expect(
      diedContainer(event("die", { name: "k-worker", "io.x-k8s.kind.cluster": "k", exitCode: "137" })),
    ).to.deep.equal({
      name: "k-worker",
      cluster: "k",
    });
    expect(diedContainer(event("die", { name: "plain" }))).to.deep.equal({
      name: "plain",
      cluster: undefined,
    });
    expect(diedContainer(event("pause", { name: "k-worker" })), "a partition pauses").to.equal(undefined);
    expect(diedContainer(event("die", {}))).to.equal(undefined);
    expect(diedContainer("not json")).to.equal(undefined);
    expect(diedContainer("[1,2]")).to.equal(undefined);
  });

  it("names a target by its container (default: the node's name) and, when both say one, its cluster", function () {
    const target = (node: string, options: Record<string, string> = {}) => ({ node, options });
    const died = { name: "k-worker", cluster: "k" };
    expect(namesContainer(target("k-worker"), died)).to.equal(true);
    expect(namesContainer(target("k-worker", { cluster: "k" }), died)).to.equal(true);
    expect(namesContainer(target("k-worker", { cluster: "other" }), died)).to.equal(false);
    expect(namesContainer(target("k-worker2"), died)).to.equal(false);
    expect(namesContainer(target("node-a", { container: "k-worker" }), died)).to.equal(true);
    expect(
      namesContainer(target("k-worker", { cluster: "k" }), { name: "k-worker", cluster: undefined }),
    ).to.equal(true);
  });
});
