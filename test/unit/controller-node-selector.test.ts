import { expect } from "chai";
import { guardDecision, type GuardNode } from "../../lib/controller/guard.js";
import { hostnameSelector, parseNodeSelector } from "../../lib/controller/node-selector.js";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { RekindleError } from "../../lib/errors.js";

const labels = { "kubernetes.io/hostname": "w1", pool: "chaos", "topology.kubernetes.io/zone": "a" };

describe("controller --node-selector: which nodes it may fence", function () {
  it("matches kubectl's selector forms", function () {
    const cases: [string, boolean][] = [
      ["", true],
      ["pool=chaos", true],
      ["pool==chaos", true],
      ["pool!=chaos", false],
      ["pool=other", false],
      ["pool", true],
      ["!pool", false],
      ["!gpu", true],
      ["gpu!=yes", true],
      ["kubernetes.io/hostname in (w1,w2)", true],
      ["kubernetes.io/hostname in (w2, w3)", false],
      ["kubernetes.io/hostname notin (w2)", true],
      ["pool=chaos,topology.kubernetes.io/zone in (a,b)", true],
      ["pool=chaos, topology.kubernetes.io/zone=b", false],
    ];
    for (const [text, expected] of cases)
      expect(parseNodeSelector(text).matches(labels), JSON.stringify(text)).to.equal(expected);
    expect(parseNodeSelector("pool").matches(undefined)).to.equal(false);
  });

  it("refuses what is not a selector, naming the flag and the valid forms", function () {
    for (const text of ["pool=chaos,", "pool in (a", "a b", "=x", "pool in (a,b) extra"]) {
      const error = (() => {
        try {
          parseNodeSelector(text);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error, text).to.be.instanceOf(RekindleError);
      const e = error as RekindleError;
      expect(e.code).to.equal("INVALID_INPUT");
      expect(e.message).to.include(`--node-selector ${JSON.stringify(text)}`);
      expect(e.hint).to.include("key in (a,b)");
    }
  });

  it("is a controller flag, checked at start", function () {
    const { config } = controllerSettings(parseControllerFlags(["--node-selector", "pool=chaos"]));
    expect(config.nodeSelector).to.equal("pool=chaos");
    expect(controllerSettings(parseControllerFlags([])).config.nodeSelector).to.equal("");
    expect(() => controllerSettings(parseControllerFlags(["--node-selector", "a b"]))).to.throw(
      RekindleError,
      "--node-selector",
    );
  });

  it("names nodes by their hostname label", function () {
    expect(hostnameSelector(["w2", "w1"])).to.equal("kubernetes.io/hostname in (w1,w2)");
    expect(parseNodeSelector(hostnameSelector(["w1"])).matches(labels)).to.equal(true);
  });

  it("the guard holds a lost node the selector does not match, with its own reason", function () {
    const node = (name: string, extra: Partial<GuardNode> = {}): GuardNode => ({
      name,
      zone: "a",
      controlPlane: false,
      excluded: false,
      unhealthy: false,
      fencing: false,
      ...extra,
    });
    const nodes = [node("w1", { unhealthy: true, unselected: true }), node("w2"), node("w3"), node("w4")];
    expect(guardDecision("w1", { nodes, maxUnhealthy: "40%", paused: false })).to.deep.equal({
      allowed: false,
      reason: "NotSelected",
      message: "w1 is not matched by the controller's --node-selector",
    });
    expect(guardDecision("w2", { nodes, maxUnhealthy: "3", paused: false }).allowed).to.equal(true);
  });
});
