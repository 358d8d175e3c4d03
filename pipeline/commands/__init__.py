"""The commands: the click command line (cli), the settings and outputs it asks for (app),
--watch, --batch, the starter config, and training the models (train_models, tiny_models)."""
