# The rekindle image (controller in-cluster): compiled dist/ and the packages `rekindle controller`
# loads at start, no more (docker/controller/package.json: no testcontainers, no mocha or allure).
# NODE_IMAGE is the base of both stages; `rekindle kind build-controller-image` passes a stand-in
# made on the machine (Debian minbase and the local Node.js) where node:22-slim cannot be pulled.
#
# No fence agents: the image does not carry Debian's fence-agents (Python and some hundred agents).
# The controller refuses at start, exit 2, a fence-agent template whose agent it cannot find (on
# /usr/sbin:/usr/bin:$PATH), and a docker template (it needs testcontainers). To fence with an
# agent in a pod, build on this image: `FROM rekindle:<version>`, `USER root`,
# `RUN apt-get update && apt-get install -y --no-install-recommends fence-agents`, `USER 1000:1000`.
ARG NODE_IMAGE=node:22-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY docker/controller/package.json controller-package.json
# npm's cache: empty in the repository (docker/npm-cache/README.md says who fills it and why).
COPY docker/npm-cache /root/.npm/
COPY lib lib
COPY suites suites
COPY deploy deploy
COPY bin bin
# true: install only from the cache above (a build without network).
ARG NPM_OFFLINE=false
# npm ci installs everything and compiles dist/ (prepare); then package.json becomes the controller's
# (generated from its import graph: test/support/controller-package.ts) and npm prune removes every
# package it does not name (leaving the scopes' directories empty: removed). The image runs as uid
# 1000 and its files belong to root: readable by all, whatever the umask of the checkout they came from.
RUN npm ci --no-audit --no-fund --offline=${NPM_OFFLINE} \
    && mv controller-package.json package.json \
    && npm prune --omit=dev --no-audit --no-fund --offline=${NPM_OFFLINE} \
    && find node_modules -mindepth 1 -maxdepth 1 -name '@*' -type d -empty -delete \
    && chmod -R a+rX package.json node_modules dist bin deploy

FROM ${NODE_IMAGE}
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY --from=build /src/bin bin
COPY --from=build /src/deploy deploy
# The node image's user "node", by number: the kubelet can only verify runAsNonRoot for a numeric
# user (deploy/controller/deployment.yaml sets the same uid and gid).
USER 1000:1000
ENTRYPOINT ["node", "/app/bin/rekindle.js"]
