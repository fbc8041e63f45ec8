# The control plane image (API, worker and the runtime it starts). Temporal runs as its own service in compose.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates procps wget && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
ENV GRAPHX_SKIP_TEMPORAL_INSTALL=1
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# The deployed apps' runtime bundle (bin/runtime-bundle.js), so no instance builds it at start.
RUN node bin/runtime-bundle.js
ENV NODE_ENV=production
EXPOSE 8080 8123
CMD ["node", "bin/graphx.js", "start"]
