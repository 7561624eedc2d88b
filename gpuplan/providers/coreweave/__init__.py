"""CoreWeave: a GPU cloud gpuplan prices and plans on, without a lifecycle adapter.

Its offers (``pricing/coreweave.csv``) are the on-demand and spot instance prices of
CoreWeave's pricing page (North America, region ``us``), each row naming the page and
the day read. HGX H100, H200 and B200 nodes carry 8 x 400 Gbit/s InfiniBand (3,200
Gbit/s a node), A100 nodes 1,600; the L40S and L40 nodes none. CoreWeave publishes no
price API, so ``catalog refresh`` skips it with one line; prices change by editing the
file from the page.
"""
