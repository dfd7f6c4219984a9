"""Values layer 1 and layer 3 share: what model calls used (`usage`) and cost (`prices`), and
the resource limits a stage table sets for its workers' commands (`limits`). A leaf: it
imports no layer, so the controller reads them without importing the runtime."""
