// A throwaway self-signed certificate for 127.0.0.1 (openssl), for loopback HTTPS stand-ins.
import { execa } from "execa";
import { join } from "node:path";

/** Writes key.pem and cert.pem into `dir` (valid one day, SAN IP:127.0.0.1); returns their paths. */
export async function selfSignedLoopbackCertificate(dir: string): Promise<{ key: string; cert: string }> {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  await execa("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
  ]);
  return { key, cert };
}
