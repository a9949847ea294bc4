# The platform image: one image for every role (edge, control-plane, worker, operator), chosen by
# the `--role` argument, as the Helm chart in charts/platform runs it:
#   docker build -t svc-platform:0.1.0 .
#   docker run --rm -e DATABASE_URL=... -e TEMPORAL_ADDRESS=... svc-platform:0.1.0 --role worker
# TypeScript runs through tsx (a runtime dependency), so there is no compile step. The edge role
# runs on Bun, which the `bun` dependency installs into node_modules (the chart sets its command).
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json main.ts ./
COPY api-edge ./api-edge
COPY control-plane ./control-plane
COPY workers ./workers
# The image's user `node` (uid 1000); state and caches go under /tmp, which the chart mounts writable.
ENV SVC_STATE_DIR=/tmp/svc/state SVC_CACHE_DIR=/tmp/svc/cache
USER node
EXPOSE 8080 8081 8090
# main.ts, the production entry point: it reads its settings from the environment and starts no
# local PostgreSQL or Temporal server (`npm start`, scripts/start.ts, does). `node --import tsx`
# rather than `npm start`: npm start would check (and, on a mismatch, reinstall) node_modules, which
# a read-only root filesystem forbids. The young generation's semi-space of 64 MB
# as in `npm start` (docs/decisions/0038-node-semi-space.md).
ENTRYPOINT ["node", "--max-semi-space-size=64", "--import", "tsx", "main.ts"]
CMD ["--role", "all"]
