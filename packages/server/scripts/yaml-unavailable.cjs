// Bundled in place of the `yaml` package, which @fastify/swagger imports for YAML output. Gatehouse
// serves its OpenAPI document as JSON only; leaving YAML out is 165 KB less to parse at every start.
'use strict';
function unavailable() {
  throw new Error('YAML output is not built into the Gatehouse server: use /v1/openapi.json.');
}
module.exports = { stringify: unavailable, parse: unavailable };
