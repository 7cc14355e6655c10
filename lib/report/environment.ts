// summary.json's `environment`: what produced a run, so a sign-off can say which rekindle, which
// Kubernetes, which images and which knob values its numbers came from. A fact that cannot be
// known is null; every version says where it was read.
import { availableParallelism, arch, platform, release, totalmem } from "node:os";
import type { TimingProfile } from "../cluster/profiles.js";
import type { KnobSource, ProviderImages, ProviderName } from "../cluster/provider.js";
import { rekindleBuildInfo } from "../util/build-info.js";

/** A version as one source reported it; version null when that source could not say. */
export interface ComponentVersion {
  version: string | null;
  /** Where the version was read, e.g. "kube-apiserver /version". */
  source: string;
}

/** An image by reference and content digest (the engine's image ID, sha256:…), with where both came from. */
export interface ImageIdentity {
  reference: string | null;
  digest: string | null;
  source: string;
}

/** One node's versions from its Node status.nodeInfo (empty strings there are null here). */
export interface NodeInfoVersions {
  name: string;
  kubeletVersion: string | null;
  kubeProxyVersion: string | null;
  containerRuntimeVersion: string | null;
  osImage: string | null;
  kernelVersion: string | null;
}

export interface ClusterVersions {
  apiserver: ComponentVersion;
  controllerManager: ComponentVersion;
  scheduler: ComponentVersion;
  /** Distinct kubelet versions of the nodes, comma-separated (one value on a uniform cluster). */
  kubelet: ComponentVersion;
  kubeProxy: ComponentVersion;
  nodes: NodeInfoVersions[];
}

export interface RekindleBuild {
  version: string;
  /** null outside a git checkout (an npm install) or without git. */
  gitSha: string | null;
  /** Whether tracked files differ from gitSha (as `git describe --dirty`); null when gitSha is. */
  gitDirty: boolean | null;
}

export interface HostFacts {
  cores: number;
  memoryBytes: number;
  /** os.release(): the kernel release on Linux. */
  kernel: string;
  platform: string;
  arch: string;
  nodejs: string;
}

export interface RunEnvironment {
  rekindle: RekindleBuild;
  provider: string;
  /** The provider's description of the cluster; null when none came up. */
  cluster: string | null;
  /** The kind node image; reference and digest null where nodes are not images (sim, existing). */
  nodeImage: ImageIdentity;
  kubernetes: ClusterVersions;
  /** The controller image when the controller ran in-cluster during the run; null when it did not. */
  controllerImage: ImageIdentity | null;
  /** Every timing knob of the run: the parsed timing profile (lib/cluster/profiles.ts). */
  timing: TimingProfile;
  /**
   * On a cluster rekindle did not create: each knob the windows use, read from the cluster (kubelet
   * configz, Leases, node conditions) or assumed (the profile), and where. Absent elsewhere.
   */
  knobSources?: KnobSource[];
  host: HostFacts;
}

/** rekindle's version (package.json) and, in a git checkout, its commit and whether the tree differs. */
export async function rekindleBuild(): Promise<RekindleBuild> {
  const info = await rekindleBuildInfo();
  return {
    version: info.version,
    gitSha: info.gitSha === "unknown" ? null : info.gitSha,
    gitDirty: info.dirty,
  };
}

export function hostFacts(): HostFacts {
  return {
    cores: availableParallelism(),
    memoryBytes: totalmem(),
    kernel: release(),
    platform: platform(),
    arch: arch(),
    nodejs: process.version,
  };
}

/** Cluster versions when no cluster answered: every version null, saying why. */
export function unknownClusterVersions(why: string): ClusterVersions {
  const unknown = { version: null, source: why };
  return {
    apiserver: unknown,
    controllerManager: unknown,
    scheduler: unknown,
    kubelet: unknown,
    kubeProxy: unknown,
    nodes: [],
  };
}

/** A node image that is not an image (or is not known), with why. */
export function noImage(why: string): ImageIdentity {
  return { reference: null, digest: null, source: why };
}

/** What the run learned from its cluster while it was up; each absent when it never got that far. */
export interface ClusterFacts {
  /** The provider's description of the cluster. */
  cluster?: string;
  versions?: ClusterVersions;
  images?: ProviderImages;
  /** Why the images could not be read. */
  imagesError?: string;
  /** The cluster's own timing, where it differs from the profile asked for (knobs read from an existing cluster). */
  timing?: TimingProfile;
  knobSources?: KnobSource[];
}

export interface EnvironmentInput extends ClusterFacts {
  provider: ProviderName;
  timing: TimingProfile;
  /**
   * rekindle's build as the run started (a commit made while a long run goes on is not what ran).
   * Default: read now.
   */
  rekindle?: RekindleBuild | undefined;
}

function nodeImageOf(input: EnvironmentInput): ImageIdentity {
  const image = input.images?.nodeImage;
  if (image !== undefined)
    return { ...image, source: "the kind node containers' image, and its image ID in the container engine" };
  if (input.imagesError !== undefined) return noImage(`could not be read: ${input.imagesError}`);
  if (input.cluster === undefined) return noImage("no cluster came up");
  switch (input.provider) {
    case "sim":
      return noImage("none: the sim's nodes are KWOK processes, not images");
    case "existing":
      return noImage("not visible: rekindle does not inspect an existing cluster's machines");
    case "kind":
      return noImage("the container engine did not list the control-plane container");
  }
}

/** The run's environment block from what it learned (never throws: unknowns are null, with why). */
export async function runEnvironment(input: EnvironmentInput): Promise<RunEnvironment> {
  const controller = input.images?.controllerImage;
  return {
    rekindle: input.rekindle ?? (await rekindleBuild()),
    provider: input.provider,
    cluster: input.cluster ?? null,
    nodeImage: nodeImageOf(input),
    kubernetes:
      input.versions ??
      unknownClusterVersions(
        input.cluster === undefined ? "no cluster came up" : "the cluster was not asked",
      ),
    controllerImage:
      controller === undefined
        ? null
        : {
            ...controller,
            source: "the image the in-cluster controller ran, and its image ID in the container engine",
          },
    timing: input.timing,
    ...(input.knobSources !== undefined ? { knobSources: input.knobSources } : {}),
    host: hostFacts(),
  };
}
