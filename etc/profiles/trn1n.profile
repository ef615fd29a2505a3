# trn1n.32xlarge: trn1 with 16 EFA for network-heavy training.
Match=trn1n.32xlarge
Include=efa-neuron
