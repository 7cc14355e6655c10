// The kind power webhook's serving certificate and the kind network's gateway it listens on.
import { expect } from "chai";
import { X509Certificate } from "node:crypto";
import type { ContainerRuntimeClient } from "testcontainers";
import { ipv4Gateway, kindNetworkGateway } from "../../lib/cluster/kind/network.js";
import { servingCertificate } from "../../lib/cluster/kind/power-webhook/tls.js";
import { rekindleRejection } from "../support/assertions.js";

describe("kind power webhook", function () {
  describe("serving certificate", function () {
    this.timeout(20_000);

    it("is signed by a new CA and names the IP addresses asked for", async function () {
      const tls = await servingCertificate({ ips: ["172.18.0.1", "::1"], days: 2 });
      const ca = new X509Certificate(tls.ca);
      const cert = new X509Certificate(tls.cert);
      expect(ca.ca).to.equal(true);
      expect(cert.ca).to.equal(false);
      expect(cert.verify(ca.publicKey)).to.equal(true);
      expect(cert.checkIssued(ca)).to.equal(true);
      expect(cert.checkIP("172.18.0.1")).to.equal("172.18.0.1");
      expect(cert.checkIP("172.18.0.2")).to.equal(undefined);
      expect(cert.subjectAltName).to.include("IP Address:0:0:0:0:0:0:0:1");
      const lifetimeMs = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
      expect(lifetimeMs).to.equal(2 * 86_400_000);
      expect(tls.key).to.include("PRIVATE KEY");
      expect(tls.ca).not.to.include("PRIVATE KEY");
    });

    it("refuses a name where an IP address belongs", async function () {
      const error = await rekindleRejection(servingCertificate({ ips: ["localhost"] }));
      expect(error.code).to.equal("INVALID_INPUT");
      expect((await rekindleRejection(servingCertificate({ ips: [] }))).code).to.equal("INVALID_INPUT");
    });
  });

  describe("kind network gateway", function () {
    it("reads the IPv4 gateway in either spelling, else the subnet's first address", function () {
      expect(ipv4Gateway([{ Subnet: "172.18.0.0/16", Gateway: "172.18.0.1" }])).to.equal("172.18.0.1");
      expect(ipv4Gateway([{ Subnet: "172.28.0.0/16", Gateway: "172.28.0.1/16" }])).to.equal("172.28.0.1");
      expect(
        ipv4Gateway([
          { Subnet: "fc00:f853:ccd:e793::/64", Gateway: "fc00:f853:ccd:e793::1" },
          { Subnet: "172.19.0.0/16", Gateway: "172.19.0.1" },
        ]),
      ).to.equal("172.19.0.1");
      expect(ipv4Gateway([{ Subnet: "172.17.0.0/16" }])).to.equal("172.17.0.1");
      expect(ipv4Gateway([{ Subnet: "10.1.2.128/25", Gateway: "" }])).to.equal("10.1.2.129");
      expect(ipv4Gateway([{ Subnet: "fc00::/64" }])).to.equal(undefined);
      expect(ipv4Gateway([])).to.equal(undefined);
    });

    const engine = (inspect: () => Promise<unknown>) => () =>
      Promise.resolve({ network: { getById: () => ({ inspect }) } } as unknown as ContainerRuntimeClient);

    it("inspects the named network", async function () {
      const gateway = await kindNetworkGateway({
        network: "kind",
        client: engine(() =>
          Promise.resolve({ IPAM: { Config: [{ Subnet: "172.18.0.0/16", Gateway: "172.18.0.1" }] } }),
        ),
      });
      expect(gateway).to.equal("172.18.0.1");
    });

    it("says there is no such network, and what creates it", async function () {
      const notFound = Object.assign(new Error("(HTTP code 404) no such network"), { statusCode: 404 });
      const error = await rekindleRejection(
        kindNetworkGateway({ network: "kind", client: engine(() => Promise.reject(notFound)) }),
      );
      expect(error.code).to.equal("NOT_FOUND");
      expect(error.message).to.equal('no docker network "kind" on the container engine');
      expect(error.hint).to.include("kind creates it");
      const ipv6Only = await rekindleRejection(
        kindNetworkGateway({
          network: "v6",
          client: engine(() => Promise.resolve({ IPAM: { Config: [{ Subnet: "fc00::/64" }] } })),
        }),
      );
      expect(ipv6Only.message).to.include("no IPv4 subnet");
    });
  });
});
