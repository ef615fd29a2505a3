# trn2.48xlarge and trn2u.48xlarge (UltraServer): 16 Trainium2; EFA count
# read at run time.
Match=trn2.48xlarge,trn2u.48xlarge,trn2*
Include=efa-neuron
