"""The HTTP service (FastAPI), started by `contrastgen serve`; see docs/http-service.md.

Modules, in the order a request meets them:
  connection   uvicorn's protocol with deadlines on a request's headers and its whole body (408)
  access_log   JSON-lines logs; one line per request, with its request id
  guards       Host (loopback names when tokenless), Content-Type (JSON only), whole-body deadline, 499s
  direct       POST /v1/perturb straight to its route function, without FastAPI's per-request stack
  app          the app factory: lifespan (engine loaded once), limits, auth, CORS, routers
  auth         optional bearer token for /v1
  routes_meta  /healthz /readyz /version
  routes_v1    /v1 endpoints: read the body, hand it to `service` in the worker pool
  disconnect   the work cancelled (499) when its client leaves
  offload      the worker pool: admission control (503) and deadlines (504)
  parsing      body -> (input limits, keys given twice, strict pydantic model, parsed JSON), FastAPI-shaped 422s;
               a small body parsed first and proven within the limits from its parsed value
  models       request and response models (the OpenAPI schema)
  service      limits, then the library calls the CLI makes, then sorted-key JSON bytes
  errors       exceptions -> status codes and bodies
  state        what a process loads once: engine, templates, corpus, verifier rules
  corpus_cache per-graph distractor statistics for requests without a server corpus
  openapi      request schemas and examples (examples.json, by make_examples) in /openapi.json
  settings     limits and options, carried to worker processes through the environment
  server       uvicorn start-up (with `connection`'s protocol)
"""
