import { expect } from "chai";
import { pidInContainer, pidsFromTop } from "../../lib/cluster/kind/frozen-kill.js";

describe("killing a frozen kind node: finding its processes", function () {
  it("reads host PIDs from docker top's PID column, whatever its position", function () {
    expect(pidsFromTop({ Titles: ["PID"], Processes: [["4242"], ["4250"]] })).to.deep.equal([4242, 4250]);
    expect(
      pidsFromTop({
        Titles: ["UID", "PID", "PPID", "CMD"],
        Processes: [
          ["root", "900", "880", "/sbin/init"],
          ["root", "901", "900", "kubelet"],
        ],
      }),
    ).to.deep.equal([900, 901]);
  });

  it("never yields the host's init, and nothing from an answer it cannot read", function () {
    expect(pidsFromTop({ Titles: ["PID"], Processes: [["1"], ["x"], ["77"]] })).to.deep.equal([77]);
    expect(pidsFromTop({ Titles: ["CMD"], Processes: [["sh"]] })).to.deep.equal([]);
    expect(pidsFromTop(undefined)).to.deep.equal([]);
    expect(pidsFromTop({ Titles: "PID", Processes: [] })).to.deep.equal([]);
  });

  it("touches a PID only when its cgroup names the container (a remote engine's PIDs are not ours)", function () {
    const id = "e3e490c4f435e3ce7fd38ca49e51c4fd73af920b9c1edc4345122748d84b7043";
    const cgroups: Record<number, string> = {
      10: `12:freezer:/docker/${id}\n11:memory:/docker/${id}\n`,
      11: "12:freezer:/user.slice\n",
    };
    const read = (pid: number) => cgroups[pid];
    expect(pidInContainer(10, id, read)).to.equal(true);
    expect(pidInContainer(11, id, read)).to.equal(false);
    expect(pidInContainer(12, id, read)).to.equal(false);
  });
});
