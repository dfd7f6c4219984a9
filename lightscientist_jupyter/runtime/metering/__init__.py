"""The metering of model calls: tokens read or estimated (`tokens`), the per-runtime meter
with its budget gate (`meter`), the LangChain middleware and callback through which each
session's calls reach it (`usage_callback`), and the price of a model spec (`model_prices`).
What usage and a price are: `values`."""
