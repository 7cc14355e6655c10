import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { parseDurationMs, parseSignedDurationMs } from "../../lib/util/duration.js";

function rejection(text: string, what?: string): RekindleError {
  try {
    parseDurationMs(text, what);
  } catch (error) {
    if (error instanceof RekindleError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(text)} was accepted`);
}

describe("parseDurationMs (Go durations)", () => {
  it("reads single-unit durations in every Go unit", () => {
    expect(parseDurationMs("500ms")).to.equal(500);
    expect(parseDurationMs("10s")).to.equal(10_000);
    expect(parseDurationMs("2m")).to.equal(120_000);
    expect(parseDurationMs("2h")).to.equal(7_200_000);
    expect(parseDurationMs("1500us")).to.equal(1.5);
    expect(parseDurationMs("1500µs")).to.equal(1.5);
    expect(parseDurationMs("2000000ns")).to.equal(2);
  });

  it("adds up compound durations and fractions, and takes a bare 0 as Go does", () => {
    expect(parseDurationMs("1m30s")).to.equal(90_000);
    expect(parseDurationMs("1h2m3s")).to.equal(3_723_000);
    expect(parseDurationMs("1.5s")).to.equal(1_500);
    expect(parseDurationMs("0")).to.equal(0);
    expect(parseDurationMs(" 20s ")).to.equal(20_000);
  });

  for (const bad of ["", "30", "soon", "10 s", "-5s", "5d", "1m30", "s", "1.s", "10S"]) {
    it(`rejects ${JSON.stringify(bad)} naming the input and the valid forms`, () => {
      const error = rejection(bad);
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include(JSON.stringify(bad));
      expect(error.message).to.include("a Go duration such as 500ms, 10s, 1m30s or 2h");
    });
  }

  it("names what was being parsed (a flag or config field) in the error", () => {
    expect(rejection("later", "--check-interval").message).to.match(/--check-interval "later"/);
  });
});

describe("parseSignedDurationMs (offsets)", () => {
  it("reads a sign in front of a Go duration; no sign is ahead; 0 is 0", () => {
    expect(parseSignedDurationMs("-30s")).to.equal(-30_000);
    expect(parseSignedDurationMs("+1m30s")).to.equal(90_000);
    expect(parseSignedDurationMs("45s")).to.equal(45_000);
    expect(parseSignedDurationMs("0")).to.equal(0);
    expect(Object.is(parseSignedDurationMs("-0"), 0)).to.equal(true);
  });

  for (const bad of ["", "-", "--30s", "+-1s", "-30", "behind"]) {
    it(`rejects ${JSON.stringify(bad)} naming the input and the signed forms`, () => {
      try {
        parseSignedDurationMs(bad, "--offset");
        expect.fail(`${JSON.stringify(bad)} was accepted`);
      } catch (error) {
        expect(error).to.be.instanceOf(RekindleError);
        const message = (error as RekindleError).message;
        expect(message).to.include(`--offset ${JSON.stringify(bad)}`);
        expect(message).to.include("such as -30s (behind), +1m30s or 45s (ahead), or 0");
      }
    });
  }
});
