// A throwaway CA and a serving certificate it signed, made with the openssl CLI, for a service that
// pods reach by IP address (the kind network's gateway): the CA goes into the controller's CA
// ConfigMap, the key and certificate into the server. The CA's key is discarded, so nothing else
// can ever be signed with it.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { runCommand } from "../../../util/command.js";

/** PEM texts: the server's key and certificate, and the CA that verifies the certificate. */
export interface ServingTls {
  key: string;
  cert: string;
  ca: string;
}

export interface ServingCertificateOptions {
  /** IP addresses for the certificate's subjectAltName (at least one): where clients connect. */
  ips: readonly string[];
  /** Validity of the CA and the certificate. Default 30 days. */
  days?: number;
  /** Default "openssl". */
  openssl?: string;
  /** The certificates' subject: "<commonName> CA" and "<commonName>". Default "rekindle kind power webhook". */
  commonName?: string;
  signal?: AbortSignal;
}

const DEFAULT_DAYS = 30;
/** P-256 keys: made in milliseconds (RSA takes a visible moment), and every TLS stack takes them. */
const KEY_ARGS = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

/** A new CA and a certificate for `ips` signed by it (serverAuth only). */
export async function servingCertificate(options: ServingCertificateOptions): Promise<ServingTls> {
  const { ips } = options;
  const bad = ips.filter((ip) => isIP(ip) === 0);
  if (ips.length === 0 || bad.length > 0) {
    throw RekindleError.invalidInput(
      "certificate IP address",
      bad[0] ?? "(none)",
      "one or more IPv4 or IPv6 addresses",
    );
  }
  const days = options.days ?? DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < 1) {
    throw RekindleError.invalidInput(
      "certificate validity (days)",
      days,
      "a whole number of days, 1 or more",
    );
  }
  const openssl = options.openssl ?? "openssl";
  const commonName = options.commonName ?? "rekindle kind power webhook";
  const run = (args: string[]) => runCommand(openssl, args, options.signal ? { signal: options.signal } : {});
  // Private keys touch the disk only in a fresh mode-0700 directory, removed before returning.
  const dir = mkdtempSync(join(tmpdir(), "rekindle-power-webhook-tls-"));
  const file = (name: string) => join(dir, name);
  try {
    await run([
      "req",
      "-x509",
      ...KEY_ARGS,
      "-keyout",
      file("ca.key"),
      "-out",
      file("ca.crt"),
      "-days",
      String(days),
      "-subj",
      `/CN=${commonName} CA`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    await run([
      "req",
      "-new",
      ...KEY_ARGS,
      "-keyout",
      file("server.key"),
      "-out",
      file("server.csr"),
      "-subj",
      `/CN=${commonName}`,
    ]);
    writeFileSync(
      file("server.ext"),
      [
        `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(",")}`,
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature",
        "extendedKeyUsage=serverAuth",
        "",
      ].join("\n"),
    );
    await run([
      "x509",
      "-req",
      "-in",
      file("server.csr"),
      "-CA",
      file("ca.crt"),
      "-CAkey",
      file("ca.key"),
      // A random serial: every run's CA has the same name, and NSS (Firefox) refuses two
      // certificates with one issuer name and serial.
      "-set_serial",
      `0x${randomBytes(16).toString("hex")}`,
      "-days",
      String(days),
      "-extfile",
      file("server.ext"),
      "-out",
      file("server.crt"),
    ]);
    return {
      key: readFileSync(file("server.key"), "utf8"),
      cert: readFileSync(file("server.crt"), "utf8"),
      ca: readFileSync(file("ca.crt"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
