"""Values the layers share: what model calls used (`usage`) and cost (`prices`), the resource
limits a stage table sets for its workers' commands (`limits`), and the messages that cross
from layer 1 to layer 2 (`task`: the stage task layer 1 builds, the result layer 2
answers). A leaf: it imports no layer, so the controller builds and reads them without
importing the layers below it."""
