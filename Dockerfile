# One image for the api, the worker, the simulator and the operator CLI (node dist/src/entry/…);
# docker-compose.yml picks the entry point.
#
# Node 24 LTS, pinned by digest so every rebuild starts from the same base. The digest is the
# multi-architecture index of node:24-bookworm-slim as pinned in public projects (it could not be
# checked from where this was written: no registry access). To pin the current one:
#   docker buildx imagetools inspect node:24-bookworm-slim   # the "Digest:" line
# and replace it here (Renovate/Dependabot keep such pins up to date).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The TypeScript build needs no package's install script.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Production dependencies only, and no install script runs but the two native modules' own,
# named here: they load their prebuilt N-API binary (@lmdb/lmdb-linux-*, @msgpackr-extract/*).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm rebuild lmdb msgpackr-extract \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
# LMDB's answers live on a volume here (LMDB_PATH); the process runs as the image's `node` user.
RUN mkdir -p /var/lib/galang && chown node:node /var/lib/galang
USER node
EXPOSE 3000
CMD ["node", "dist/src/entry/api.js"]
