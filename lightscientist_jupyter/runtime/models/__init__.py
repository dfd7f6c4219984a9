"""Chat models: a model specification turned into a LangChain chat model (`resolver`, the one
module that may import the offline scientist) and the check that a model can call tools
(`check`)."""
