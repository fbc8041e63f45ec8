# The control plane image: `graphx serve` (API, gateway, control worker), `graphx worker` and the runtime it starts.
# Temporal and PostgreSQL run as their own services (docker-compose.yml).
#
#   docker build -t graphx .                                   # Node 22 LTS (node:22-bookworm-slim)
#   docker build --build-arg NODE_IMAGE=node:24-bookworm-slim -t graphx .
#
# NODE_IMAGE is any Debian-based image with node and npm on the PATH (the tests use one built offline).
ARG NODE_IMAGE=node:22-bookworm-slim

# deps: production packages only. The postinstall script (scripts/install-temporal-cli.js) must be in place before
# `npm ci` runs it; it installs nothing here (GRAPHX_SKIP_TEMPORAL_INSTALL), Temporal being a service of its own.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
ENV GRAPHX_SKIP_TEMPORAL_INSTALL=1
COPY package.json package-lock.json ./
COPY packages/console/package.json ./packages/console/
COPY scripts ./scripts
# npm workspaces: every package's manifest must be there for `npm ci` (their sources come with the build stage).
COPY packages/kit/package.json ./packages/kit/
COPY packages/contract/package.json ./packages/contract/
COPY packages/runtime/package.json ./packages/runtime/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# console: the web console's static build (packages/console/dist). Its build tools (Vite, React) are the console
# workspace's devDependencies and stay in this stage; the image serves the built files only.
FROM ${NODE_IMAGE} AS console
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/console/package.json ./packages/console/
COPY packages/kit/package.json ./packages/kit/
COPY packages/contract/package.json ./packages/contract/
COPY packages/runtime/package.json ./packages/runtime/
RUN npm ci --no-audit --no-fund --ignore-scripts --workspace=@graphx/console --include-workspace-root=false
COPY packages/console ./packages/console
# The statuses the console shows come from the contract package (its sources are built into the console).
COPY packages/contract/src ./packages/contract/src
COPY scripts/build-console.js ./scripts/
RUN node scripts/build-console.js && test -f packages/console/dist/index.html

# build: the sources, the console's build, and the deployed apps' runtime bundle (packages/runtime/dist), so no
# instance bundles it at start.
FROM deps AS build
COPY . .
COPY --from=console /app/packages/console/dist ./packages/console/dist
RUN node packages/runtime/bin/bundle.js

# runtime: the Node image, git (revision builds clone repositories), and the built tree, read-only to the app user.
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && echo 'graphx:x:10001:10001::/home/graphx:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'graphx:x:10001:' >> /etc/group \
 && mkdir -p /home/graphx /var/lib/graphx \
 && chown 10001:10001 /home/graphx /var/lib/graphx
WORKDIR /app
COPY --from=build /app /app
RUN ln -s /app/bin/graphx.js /usr/local/bin/graphx
ENV NODE_ENV=production HOME=/home/graphx GRAPHX_DATA_DIR=/var/lib/graphx GRAPHX_HOST=0.0.0.0
# Numeric, so orchestrators that check runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
EXPOSE 8080 8123
CMD ["graphx", "serve"]
