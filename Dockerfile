# One image for both apps; docker-compose.yml picks the entry point. Node.js 24 LTS
# (package.json "engines"). .dockerignore keeps the host's node_modules, build, embedded
# database, keys and .env files out of the build context.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The /docs pages and /llms.txt are read from docs/*.md at start.
COPY --from=build /app/docs ./docs
COPY package.json ./
# `npm run cli -- …` in the container runs dist/ (no sources here to build from).
COPY --from=build /app/scripts/cli.mjs ./scripts/cli.mjs
USER node
# API_HEAP_MB (160): the heap bound `npm start` gives the records API (docs/configuration.md).
CMD ["node", "--max-old-space-size=160", "dist/apps/records-api/src/main.js"]
