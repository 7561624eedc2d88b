"""The catalog's pure side: GPU instance offers, GPU specs, regions and price refresh decisions."""
