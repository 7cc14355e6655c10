# The rekindle image (controller in-cluster): compiled dist/ and production dependencies only.
FROM node:22-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY suites suites
COPY fixtures fixtures
COPY bin bin
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:22-slim
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
