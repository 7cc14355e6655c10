# The rekindle image (controller in-cluster): compiled dist/ and production dependencies only.
# NODE_IMAGE is the base of both stages; `rekindle kind build-controller-image` passes a stand-in
# made on the machine (Debian minbase and the local Node.js) where node:22-slim cannot be pulled.
ARG NODE_IMAGE=node:22-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# npm's cache: empty in the repository (docker/npm-cache/README.md says who fills it and why).
COPY docker/npm-cache /root/.npm/
COPY lib lib
COPY suites suites
COPY fixtures fixtures
COPY bin bin
# true: install only from the cache above (a build without network).
ARG NPM_OFFLINE=false
# The image runs as uid 1000 and its files belong to root: readable by all, whatever the umask of
# the checkout they came from.
RUN npm ci --no-audit --no-fund --offline=${NPM_OFFLINE} \
    && npm prune --omit=dev --offline=${NPM_OFFLINE} \
    && chmod -R a+rX package.json node_modules dist bin fixtures

FROM ${NODE_IMAGE}
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY --from=build /src/bin bin
COPY --from=build /src/fixtures fixtures
# The node image's user "node", by number: the kubelet can only verify runAsNonRoot for a numeric
# user (fixtures/controller/deployment.yaml sets the same uid and gid).
USER 1000:1000
ENTRYPOINT ["node", "/app/bin/rekindle.js"]
