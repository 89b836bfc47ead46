# syntax=docker/dockerfile:1
# Tollgate in a container (docs/operations.md, "Containers"): a build stage with the compilers the native addons need, and a
# slim runtime stage with production dependencies only, running as the unprivileged `node` user.

# Node.js 24, a long-term-support line (security fixes until April 2028); Node 20 reached its end of life in April 2026.
# Both stages use the same major: the native addons built here are loaded there. CI runs the test suite on this major
# (.ci/container-node) as well as on the machine's node.
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# `npm ci` also runs the `prepare` script (the web console's build); the sources must be there first.
COPY . .
RUN npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
# The project's own addon (src/lib/idle-gc.ts's malloc trim): node_modules links to it, built by `npm ci` above.
COPY --from=build --chown=root:root /app/native ./native
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/catalog ./catalog
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/src ./src
COPY --from=build --chown=root:root /app/web/dis[t] ./web/dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Ready = the database answers, the ledger flushes and Redis (when configured) answers (GET /readyz).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The gateway itself is PID 1's only child concern: node handles SIGTERM (drains streams, flushes the ledger, exits 0).
STOPSIGNAL SIGTERM
# The same node flags as `npm start` (test/deployment.test.ts holds them together): --expose-gc lets the gateway run one
# full collection once traffic pauses or falls, which hands the heap grown under load back (docs/operations.md, "Memory: what to give a replica").
CMD ["node", "--enable-source-maps", "--expose-gc", "--max-semi-space-size=8", "--no-allocation-site-pretenuring", "dist/main.js"]
