// The kind provider's small nodes: the MemTotal a pressured node shows its kubelet, the node-side
// scripts (their order matters: cgroup limits, kubelet stop/start around the filesystem move), and
// SmallNodes putting a node back — memory at once, the kubelet's filesystem only once the
// pressure condition has cleared, at once when hurried, never when the cluster is going away.
import { expect } from "chai";
import type { KindNodes, NodeExecResult } from "../../lib/cluster/kind/nodes.js";
import { GiB, MiB } from "../../lib/cluster/kind/quantity.js";
import {
  DEFAULT_SMALL_NODE,
  restoreMemoryCommand,
  restoreNodefsCommand,
  shrinkMemoryCommand,
  shrinkNodefsCommand,
  shrunkCommand,
  smallMemTotalBytes,
  SMALL_NODE_PATHS,
} from "../../lib/cluster/kind/small-node.js";
import { SmallNodes, type SmallNodesInit } from "../../lib/cluster/kind/small-nodes.js";
import type { NodeSignalStats } from "../../lib/cluster/kind/stats.js";
import { silentProgress } from "../../lib/util/progress.js";

/** Line numbers of the first line containing each fragment, in a script. */
function lineOf(script: string, fragment: string): number {
  const index = script.split("\n").findIndex((line) => line.includes(fragment));
  expect(index, fragment).to.be.at.least(0);
  return index;
}

function script(argv: string[]): string {
  expect(argv.slice(0, 2)).to.deep.equal(["sh", "-c"]);
  return argv[2] ?? "";
}

describe("kind small nodes", function () {
  describe("MemTotal shown to the kubelet", function () {
    it("working set + threshold + headroom, rounded up to a GiB", function () {
      expect(smallMemTotalBytes(190 * MiB, { bytes: 200 * MiB })).to.equal(2 * GiB);
      expect(smallMemTotalBytes(700 * MiB, { bytes: 200 * MiB })).to.equal(2 * GiB);
      expect(smallMemTotalBytes(900 * MiB, { bytes: 200 * MiB })).to.equal(3 * GiB);
      expect(smallMemTotalBytes(0, { bytes: 0 }, 0)).to.equal(GiB);
    });

    it("solves a percentage threshold, which is a share of MemTotal itself", function () {
      const total = smallMemTotalBytes(900 * MiB, { percent: 10 });
      expect(total).to.equal(3 * GiB);
      expect(total - 900 * MiB - Math.ceil(total * 0.1)).to.be.at.least(
        DEFAULT_SMALL_NODE.memoryHeadroomBytes,
      );
    });
  });

  describe("node scripts", function () {
    it("memory: a meminfo with the small MemTotal bind-mounted over /proc/meminfo", function () {
      const text = script(shrinkMemoryCommand(2 * GiB, 2 * GiB + 256 * MiB));
      expect(text).to.include(`awk -v kb=${(2 * GiB) / 1024} `);
      expect(text).to.include(`mount --bind ${SMALL_NODE_PATHS.meminfo} /proc/meminfo`);
      // Only when not mounted yet: a second call keeps the first file.
      expect(lineOf(text, 'if ! awk \'$5 == "/proc/meminfo"')).to.be.below(lineOf(text, "mount --bind"));
    });

    it("memory: the guard saves the old limits, lowers memory before memory+swap, never raises one", function () {
      const guard = 2 * GiB + 256 * MiB;
      const text = script(shrinkMemoryCommand(2 * GiB, guard));
      const cg = SMALL_NODE_PATHS.memoryCgroup;
      const save = lineOf(
        text,
        `cat ${cg}/memory.limit_in_bytes > ${SMALL_NODE_PATHS.state}/memory.limit_in_bytes`,
      );
      const memory = lineOf(text, `echo ${guard} > ${cg}/memory.limit_in_bytes`);
      const swap = lineOf(text, `echo ${guard} > ${cg}/memory.memsw.limit_in_bytes`);
      expect(save).to.be.below(memory);
      expect(memory).to.be.below(swap);
      expect(lineOf(text, `-le ${guard} ]`)).to.be.below(save);
      expect(lineOf(text, "is not writable (cgroup v2?)")).to.be.below(save);
    });

    it("memory: restoring unmounts, raises memory+swap before memory, and forgets the state", function () {
      const text = script(restoreMemoryCommand());
      const cg = SMALL_NODE_PATHS.memoryCgroup;
      expect(lineOf(text, "umount /proc/meminfo")).to.be.below(lineOf(text, "memory.memsw.limit_in_bytes >"));
      expect(lineOf(text, `> ${cg}/memory.memsw.limit_in_bytes`)).to.be.below(
        lineOf(text, `> ${cg}/memory.limit_in_bytes`),
      );
      expect(text.split("\n").at(-1)).to.equal(`rm -rf ${SMALL_NODE_PATHS.state}`);
    });

    it("disk: the kubelet stops, its directory moves onto a tmpfs, the stage goes, the kubelet starts", function () {
      const text = script(shrinkNodefsCommand(512 * MiB));
      const { kubeletRoot: root, nodefsStage: stage } = SMALL_NODE_PATHS;
      expect(text).to.include(
        `mount -t tmpfs -o size=${512 * MiB},mode=$(stat -c %a ${root}) rekindle-nodefs ${stage}`,
      );
      const stop = lineOf(text, "systemctl stop kubelet");
      const copy = lineOf(text, `cp -a --one-file-system ${root}/. ${stage}/`);
      const unstage = lineOf(text, `umount ${stage}`);
      expect(stop).to.be.below(copy);
      // The stage's own umount (not the failure path's) comes after the bind, before the start.
      const lines = text.split("\n");
      expect(lines.at(-3)).to.equal(`umount ${stage}`);
      expect(lines.at(-1)).to.equal("systemctl start kubelet");
      // On a failed copy or bind the kubelet starts again on its own directory.
      expect(lines[unstage]).to.include("systemctl start kubelet; exit 1");
    });

    it("disk: restoring stops the kubelet, unmounts the tmpfs and what is mounted on it, starts it", function () {
      const text = script(restoreNodefsCommand());
      expect(lineOf(text, "systemctl stop kubelet")).to.be.below(lineOf(text, "umount -R /var/lib/kubelet"));
      expect(text.split("\n").at(-1)).to.equal("systemctl start kubelet");
      expect(text).to.include("{ systemctl start kubelet; exit 1; }");
    });

    it("both are no-ops where nothing is shrunk (they test mountinfo first)", function () {
      for (const kind of ["memory", "disk"] as const) {
        expect(script(shrunkCommand(kind))).to.include("/proc/self/mountinfo");
      }
      expect(script(restoreNodefsCommand()).split("\n")[1]).to.match(/^if ! awk .* then exit 0; fi$/);
      expect(script(shrinkNodefsCommand(MiB)).split("\n")[1]).to.match(/^if awk .* then exit 0; fi$/);
    });
  });

  describe("SmallNodes", function () {
    interface Fake {
      small: SmallNodes;
      commands: string[];
      conditions: Map<string, string>;
    }

    function stats(memoryCapacity: number, diskCapacity: number): NodeSignalStats {
      return {
        memory: { availableBytes: memoryCapacity - 300 * MiB, capacityBytes: memoryCapacity },
        disk: { availableBytes: diskCapacity / 2, capacityBytes: diskCapacity },
      };
    }

    /** A node whose kubelet reports `memory`/`disk` capacity; "shrunk" state follows the commands. */
    function fake(options: { transitionMs?: number } = {}): Fake {
      const commands: string[] = [];
      const conditions = new Map<string, string>();
      let memory = 24 * GiB;
      let disk = 250 * GiB;
      let smallDisk = false;
      const nodes: Pick<KindNodes, "exec" | "run"> = {
        exec(_node: string, argv: readonly string[]): Promise<NodeExecResult> {
          const text = argv[2] ?? "";
          if (text === script(shrunkCommand("disk"))) {
            return Promise.resolve({ exitCode: smallDisk ? 0 : 1, output: "" });
          }
          commands.push(text);
          return Promise.resolve({ exitCode: 0, output: "" });
        },
        run(_node: string, argv: readonly string[]): Promise<string> {
          const text = argv[2] ?? "";
          commands.push(text);
          if (text === script(shrinkNodefsCommand(DEFAULT_SMALL_NODE.nodefsBytes))) {
            smallDisk = true;
            disk = DEFAULT_SMALL_NODE.nodefsBytes;
          }
          if (text === script(restoreNodefsCommand())) {
            smallDisk = false;
            disk = 250 * GiB;
          }
          if (text.includes("mount --bind /run/rekindle-small-node/meminfo")) memory = 2 * GiB;
          return Promise.resolve("guard 2415919104\n");
        },
      };
      const init: SmallNodesInit = {
        nodes,
        settings: DEFAULT_SMALL_NODE,
        stats: () => Promise.resolve(stats(memory, disk)),
        condition: (_node, type) => Promise.resolve(conditions.get(type)),
        pressureTransitionPeriodMs: options.transitionMs ?? 0,
        progress: silentProgress,
      };
      return { small: new SmallNodes(init), commands, conditions };
    }

    it("shrinks memory to the kubelet's working set + threshold + headroom and waits to see it", async function () {
      const { small, commands } = fake();
      const shrunk = await small.shrinkMemory("w", { bytes: 200 * MiB });
      expect(shrunk).to.deep.equal({ memTotalBytes: 2 * GiB, guard: "guard 2415919104" });
      expect(commands).to.deep.equal([script(shrinkMemoryCommand(2 * GiB, 2 * GiB + 256 * MiB))]);
      expect(small.touched).to.deep.equal(["w"]);
    });

    it("puts the kubelet's filesystem back only once the condition is no longer True", async function () {
      const { small, commands, conditions } = fake();
      await small.shrinkNodefs("w");
      conditions.set("DiskPressure", "True");
      small.restoreNodefsWhenCleared("w", "DiskPressure");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(commands.at(-1)).to.equal(script(shrinkNodefsCommand(DEFAULT_SMALL_NODE.nodefsBytes)));
      conditions.set("DiskPressure", "False");
      await small.settle("w");
      expect(commands.at(-1)).to.equal(script(restoreNodefsCommand()));
    });

    it("waits the kubelet's transition period even when the API never showed the condition", async function () {
      const { small, commands } = fake({ transitionMs: 300 });
      await small.shrinkNodefs("w");
      const started = Date.now();
      small.restoreNodefsWhenCleared("w", "DiskPressure");
      await small.settle("w");
      expect(Date.now() - started).to.be.at.least(290);
      expect(commands.at(-1)).to.equal(script(restoreNodefsCommand()));
    });

    it("hurried, restores at once; abandoned (cluster deleted), restores nothing", async function () {
      const hurried = fake({ transitionMs: 60_000 });
      await hurried.small.shrinkNodefs("w");
      hurried.small.restoreNodefsWhenCleared("w", "DiskPressure");
      await hurried.small.settle("w", { hurry: true });
      expect(hurried.commands.at(-1)).to.equal(script(restoreNodefsCommand()));

      const abandoned = fake({ transitionMs: 60_000 });
      await abandoned.small.shrinkNodefs("w");
      abandoned.small.restoreNodefsWhenCleared("w", "DiskPressure");
      abandoned.small.abandon();
      await abandoned.small.settle("w");
      expect(abandoned.commands.at(-1)).to.equal(script(shrinkNodefsCommand(DEFAULT_SMALL_NODE.nodefsBytes)));
    });

    it("restoring a node that is not small does nothing", async function () {
      const { small, commands } = fake();
      await small.restoreNodefs("w");
      expect(commands).to.deep.equal([]);
    });
  });
});
