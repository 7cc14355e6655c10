import { expect } from "chai";
import { nameList } from "../../lib/util/name-list.js";

describe("nameList", function () {
  it("lists few names in full", function () {
    expect(nameList([])).to.equal("");
    expect(nameList(["worker-1", "worker-2"])).to.equal("worker-1, worker-2");
    const eight = Array.from({ length: 8 }, (_, i) => `w${i + 1}`);
    expect(nameList(eight)).to.equal("w1, w2, w3, w4, w5, w6, w7, w8");
  });

  it("shortens a fleet to its first three, its last two and the count", function () {
    const fleet = Array.from({ length: 997 }, (_, i) => `worker-${i + 4}`);
    expect(nameList(fleet)).to.equal("worker-4, worker-5, worker-6, …, worker-999, worker-1000 (997 nodes)");
    const seven = ["a", "b", "c", "d", "e", "f", "g"];
    expect(nameList(seven, "pods", 3)).to.equal("a, b, c, …, f, g (7 pods)");
    expect(nameList(seven.slice(0, 6), "pods", 3)).to.equal("a, b, c, d, e, f");
  });
});
