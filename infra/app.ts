import { App } from 'aws-cdk-lib';
import { defineAllocationApp } from './allocation-app';

defineAllocationApp(new App());
